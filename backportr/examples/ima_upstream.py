"""The IMA example's mainline history, v5.10 to v6.7: the i_version clean-up posting (with
`a1175d6b1bda`), `db1d1e8b9867`, `18b44bc5a672`, the target `b836c4d29f27` and its
follow-up `8a924db2d7b5`, among unrelated changes to the same files."""

from __future__ import annotations

from backportr.examples.ima_sources import (
    A1175,
    B836C,
    DB1D1,
    DEV,
    ECRYPTFS_INODE_C,
    ERIC,
    F8A92,
    FCNTL_H,
    IMA_API_C,
    IMA_MAIN_C,
    INTEGRITY_H,
    IVERSION_H,
    IVERSION_INLINE,
    JEFF,
    LIBFS_C,
    LIBFS_END,
    LIBFS_QUERY,
    LINUS,
    MAKEFILE,
    MIMI,
    OVL18,
    OVL_INODE_C,
    OVL_SUPER_C,
    REAL_INODE_DECLARATION,
    SAVE_REAL_INODE,
    SAVE_VERSION,
    STAT_C,
    STAT_H,
    STEFAN,
)
from backportr.git.builder import RepoBuilder
from backportr.model import short


def edit(b: RepoBuilder, branch: str, path: str, old: str, new: str) -> dict[str, str | None]:
    text = b.files(branch)[path]
    if old not in text:
        raise ValueError(f"fixture edit does not match in {path}: {old!r}")
    return {path: text.replace(old, new, 1)}


def edits(b: RepoBuilder, branch: str, *changes: tuple[str, str, str]) -> dict[str, str | None]:
    files = b.files(branch)
    out: dict[str, str | None] = {}
    for path, old, new in changes:
        text = out.get(path) or files[path]
        assert text is not None
        if old not in text:
            raise ValueError(f"fixture edit does not match in {path}: {old!r}")
        out[path] = text.replace(old, new, 1)
    return out


_POSTING = "20230124193025.185781"  # git send-email's stem: date and pid; 1 is the cover


def _posting_patch(
    b: RepoBuilder,
    number: int,
    subject: str,
    *changes: tuple[str, str, str],
    new_file: tuple[str, str] | None = None,
) -> None:
    """Patch `number`/8 of the i_version posting, applied with its `Link:`."""
    files = edits(b, "master", *changes) if changes else {}
    if new_file is not None:
        files[new_file[0]] = new_file[1]
    b.commit(
        f"{subject}\n\nPart {number} of 8 of the i_version clean-up.\n\n"
        f"Signed-off-by: {JEFF.name} <{JEFF.email}>\n"
        f"Link: https://lore.kernel.org/r/{_POSTING}-{number + 1}-jlayton@kernel.org\n",
        files,
        author=JEFF,
        name=f"iversion-{number}of8",
    )


def mainline(b: RepoBuilder) -> dict[str, str | None]:
    """Build master from v5.10 to v6.7 (and fork linux-5.10.y at v5.10); the target's
    changes, which the stable branch's hand-adapted backport starts from."""
    m = "master"
    b.commit(
        "Linux 5.10",
        {
            "Makefile": MAKEFILE,
            "include/linux/stat.h": STAT_H,
            "include/uapi/linux/fcntl.h": FCNTL_H,
            "fs/stat.c": STAT_C,
            "fs/overlayfs/inode.c": OVL_INODE_C,
            "fs/overlayfs/super.c": OVL_SUPER_C,
            "fs/ecryptfs/inode.c": ECRYPTFS_INODE_C,
            "security/integrity/integrity.h": INTEGRITY_H,
            "security/integrity/ima/ima_api.c": IMA_API_C,
            "security/integrity/ima/ima_main.c": IMA_MAIN_C,
            "include/linux/iversion.h": IVERSION_H,
            "fs/libfs.c": LIBFS_C,
        },
        author=LINUS,
        name="v5.10",
    )
    b.tag("v5.10", m)
    b.branch("linux-5.10.y", m)

    # -- mainline, v5.11 .. v6.7 -----------------------------------------------------------
    b.commit(
        "ima: Fix the comment of ima_collect_measurement\n\n"
        "Spell out what the i_version check is for.\n\n"
        f"Signed-off-by: {DEV.name} <{DEV.email}>\n"
        f"Signed-off-by: {MIMI.name} <{MIMI.email}>\n",
        edit(
            b,
            m,
            "security/integrity/ima/ima_api.c",
            "\t * Dectecting file change is based on i_version.",
            "\t * Detecting file change is based on i_version.",
        ),
        author=DEV,
        name="ima-comment",
    )
    b.commit(
        "ovl: use ovl_fs as the superblock private data\n\n"
        f"Signed-off-by: {DEV.name} <{DEV.email}>\n",
        edit(
            b,
            m,
            "fs/overlayfs/super.c",
            "\tsb->s_d_op = &ovl_dentry_operations;\n",
            "\tsb->s_d_op = &ovl_dentry_operations;\n\tsb->s_magic = OVERLAYFS_SUPER_MAGIC;\n",
        ),
        author=DEV,
        name="ovl-magic",
    )
    # Jeff Layton's "fs: clean up internal i_version handling" (v8 RESEND, 8 patches, cover
    # <20230124193025.185781-1-jlayton@kernel.org>): a1175d6b1bda is 3/8.
    _posting_patch(
        b,
        1,
        "fs: uninline inode_query_iversion",
        (
            "include/linux/iversion.h",
            IVERSION_INLINE,
            "u64 inode_query_iversion(struct inode *inode);\n",
        ),
        ("fs/libfs.c", LIBFS_END, LIBFS_END + "\n" + LIBFS_QUERY),
    )
    _posting_patch(
        b,
        2,
        "fs: clarify when the i_version counter must be updated",
        (
            "include/linux/iversion.h",
            " * The change attribute (i_version) is mandated by NFSv4",
            " * The change attribute (i_version) is mandated by NFSv4 and must be updated\n"
            " * whenever the inode's data or metadata changes",
        ),
    )
    b.commit(
        "vfs: plumb i_version handling into struct kstat\n\n"
        "The NFS server has a lot of special handling for different types of\n"
        "change attribute access, depending on the underlying filesystem. Add a\n"
        "change_cookie field to struct kstat and STATX_CHANGE_COOKIE, and have\n"
        "vfs_getattr_nosec fill them in for filesystems that support i_version.\n\n"
        "Reviewed-by: NeilBrown <neilb@suse.de>\n"
        f"Signed-off-by: {JEFF.name} <{JEFF.email}>\n"
        f"Link: https://lore.kernel.org/r/{_POSTING}-4-jlayton@kernel.org\n",
        edits(
            b,
            m,
            (
                "fs/stat.c",
                "#include <linux/fs.h>\n",
                "#include <linux/fs.h>\n#include <linux/iversion.h>\n",
            ),
            (
                "fs/stat.c",
                "\t\tstat->attributes |= STATX_ATTR_DAX;\n",
                "\t\tstat->attributes |= STATX_ATTR_DAX;\n\n"
                "\tif ((request_mask & STATX_CHANGE_COOKIE) && IS_I_VERSION(inode)) {\n"
                "\t\tstat->result_mask |= STATX_CHANGE_COOKIE;\n"
                "\t\tstat->change_cookie = inode_query_iversion(inode);\n"
                "\t}\n",
            ),
            (
                "include/linux/stat.h",
                "\tu64\t\tmnt_id;\n};\n",
                "\tu64\t\tmnt_id;\n\tu64\t\tchange_cookie;\n};\n\n"
                "/* These definitions are internal to the kernel for now. Mainly used by nfsd. */\n\n"
                "/* mask values */\n"
                "#define STATX_CHANGE_COOKIE\t\t0x40000000U\t/* Want/got stx_change_attr */\n",
            ),
        ),
        author=JEFF,
        name=A1175,
    )
    for number, subject, path in (
        (4, "nfs: report the inode version in getattr if requested", "fs/nfs/inode.c"),
        (5, "ceph: report the inode version in getattr if requested", "fs/ceph/inode.c"),
        (6, "nfsd: move nfsd4_change_attribute to nfsfh.c", "fs/nfsd/nfsfh.c"),
        (7, "nfsd: use the getattr operation to fetch i_version", "fs/nfsd/vfs.h"),
        (8, "nfsd: remove fetch_iversion export operation", "include/linux/exportfs.h"),
    ):
        _posting_patch(b, number, subject, new_file=(path, f"/* {subject} */\n"))
    b.commit(
        "IMA: use vfs_getattr_nosec to get the i_version\n\n"
        "IMA currently accesses the i_version out of the inode directly when it\n"
        "does a measurement. This is fine for most simple filesystems, but can be\n"
        "problematic with more complex setups (e.g. overlayfs).\n\n"
        "Make IMA instead call vfs_getattr_nosec to get this info.\n\n"
        f"Reported-and-Tested-by: {STEFAN.name} <{STEFAN.email}>\n"
        f"Signed-off-by: {JEFF.name} <{JEFF.email}>\n"
        f"Signed-off-by: {MIMI.name} <{MIMI.email}>\n",
        edits(
            b,
            m,
            (
                "security/integrity/ima/ima_api.c",
                "\tstruct inode *inode = file_inode(file);\n",
                "\tstruct inode *inode = file_inode(file);\n\tstruct kstat stat;\n",
            ),
            ("security/integrity/ima/ima_api.c", "\tu64 i_version;\n", "\tu64 i_version = 0;\n"),
            (
                "security/integrity/ima/ima_api.c",
                "\ti_version = inode_query_iversion(inode);\n",
                "\tresult = vfs_getattr_nosec(&file->f_path, &stat, STATX_CHANGE_COOKIE,\n"
                "\t\t\t\t   AT_STATX_SYNC_AS_STAT);\n"
                "\tif (!result && (stat.result_mask & STATX_CHANGE_COOKIE))\n"
                "\t\ti_version = stat.change_cookie;\n",
            ),
            (
                "security/integrity/ima/ima_main.c",
                "\tif (atomic_read(&inode->i_writecount) == 1) {\n"
                "\t\tupdate = test_and_clear_bit(IMA_UPDATE_XATTR,\n"
                "\t\t\t\t\t    &iint->atomic_flags);\n"
                "\t\tif (!IS_I_VERSION(inode) ||\n"
                "\t\t    !inode_eq_iversion(inode, iint->version) ||\n"
                "\t\t    (iint->flags & IMA_NEW_FILE)) {\n",
                "\tif (atomic_read(&inode->i_writecount) == 1) {\n"
                "\t\tstruct kstat stat;\n\n"
                "\t\tupdate = test_and_clear_bit(IMA_UPDATE_XATTR,\n"
                "\t\t\t\t\t    &iint->atomic_flags);\n"
                "\t\tif ((iint->flags & IMA_NEW_FILE) ||\n"
                "\t\t    vfs_getattr_nosec(&file->f_path, &stat,\n"
                "\t\t\t\t      STATX_CHANGE_COOKIE,\n"
                "\t\t\t\t      AT_STATX_SYNC_AS_STAT) ||\n"
                "\t\t    !(stat.result_mask & STATX_CHANGE_COOKIE) ||\n"
                "\t\t    stat.change_cookie != iint->version) {\n",
            ),
        ),
        author=JEFF,
        name=DB1D1,
    )
    b.commit(
        "ovl: Always reevaluate the file signature for IMA\n\n"
        f'Commit {"db1d1e8b9867"} ("IMA: use vfs_getattr_nosec to get the i_version")\n'
        "partially closed an IMA integrity issue when directly modifying a file\n"
        "on the lower filesystem.\n\n"
        "Update the super_block s_iflags to SB_I_IMA_UNVERIFIABLE_SIGNATURE to\n"
        "force signature reevaluation on every file access until a fine grained\n"
        "solution can be found.\n\n"
        f"Signed-off-by: {ERIC.name} <{ERIC.email}>\n"
        f"Signed-off-by: {MIMI.name} <{MIMI.email}>\n"
        f"Signed-off-by: {LINUS.name} <{LINUS.email}>\n",
        edit(
            b,
            m,
            "fs/overlayfs/super.c",
            "\tsb->s_iflags |= SB_I_SKIP_SYNC;\n",
            "\tsb->s_iflags |= SB_I_SKIP_SYNC | SB_I_IMA_UNVERIFIABLE_SIGNATURE;\n",
        ),
        author=ERIC,
        name=OVL18,
    )
    b.commit(
        "ima: annotate iint mutex to avoid lockdep false positive warnings\n\n"
        f"Signed-off-by: {DEV.name} <{DEV.email}>\n",
        edit(
            b,
            m,
            "security/integrity/ima/ima_main.c",
            "\tmutex_lock(&iint->mutex);\n\n",
            "\tmutex_lock_nested(&iint->mutex, 0);\n\n",
        ),
        author=DEV,
        name="ima-lockdep",
    )
    target_changes = edits(
        b,
        m,
        (
            "fs/overlayfs/super.c",
            "\tsb->s_iflags |= SB_I_SKIP_SYNC | SB_I_IMA_UNVERIFIABLE_SIGNATURE;\n",
            "\tsb->s_iflags |= SB_I_SKIP_SYNC;\n",
        ),
        (
            "security/integrity/ima/ima_api.c",
            "\tstruct kstat stat;\n",
            "\tstruct kstat stat;\n" + REAL_INODE_DECLARATION,
        ),
        ("security/integrity/ima/ima_api.c", SAVE_VERSION, SAVE_VERSION + SAVE_REAL_INODE),
        (
            "security/integrity/ima/ima_main.c",
            "\tstruct inode *inode = file_inode(file);\n"
            "\tstruct integrity_iint_cache *iint = NULL;\n",
            "\tstruct inode *backing_inode, *inode = file_inode(file);\n"
            "\tstruct integrity_iint_cache *iint = NULL;\n",
        ),
        (
            "security/integrity/ima/ima_main.c",
            "\t/* Determine if already appraised/measured based on bitmask\n",
            "\t/* Detect and re-evaluate changes made to the backing file. */\n"
            "\tbacking_inode = d_real_inode(file_dentry(file));\n"
            "\tif (backing_inode != inode &&\n"
            "\t    (action & IMA_DO_MASK) && (iint->flags & IMA_DONE_MASK)) {\n"
            "\t\tif (!IS_I_VERSION(backing_inode) ||\n"
            "\t\t    backing_inode->i_sb->s_dev != iint->real_dev ||\n"
            "\t\t    backing_inode->i_ino != iint->real_ino ||\n"
            "\t\t    !inode_eq_iversion(backing_inode, iint->version)) {\n"
            "\t\t\tiint->flags &= ~IMA_DONE_MASK;\n"
            "\t\t\tiint->measured_pcrs = 0;\n"
            "\t\t}\n"
            "\t}\n\n"
            "\t/* Determine if already appraised/measured based on bitmask\n",
        ),
        (
            "security/integrity/integrity.h",
            "\tunsigned long atomic_flags;\n",
            "\tunsigned long atomic_flags;\n\tunsigned long real_ino;\n\tdev_t real_dev;\n",
        ),
    )
    b.commit(
        "ima: detect changes to the backing overlay file\n\n"
        f'Commit {"18b44bc5a672"} ("ovl: Always reevaluate the file signature for\n'
        'IMA") forced signature re-evaulation on every file access.\n\n'
        "Instead of always re-evaluating the file's integrity, detect a change\n"
        "to the backing file, by comparing the cached file metadata with the\n"
        "backing file's metadata.  Verifying just the i_version has not changed\n"
        "is insufficient.  In addition save and compare the i_ino and s_dev\n"
        "as well.\n\n"
        "Reviewed-by: Amir Goldstein <amir73il@gmail.com>\n"
        f"Tested-by: {ERIC.name} <{ERIC.email}>\n"
        "Tested-by: Raul E Rangel <rrangel@chromium.org>\n"
        "Cc: stable@vger.kernel.org\n"
        f"Signed-off-by: {MIMI.name} <{MIMI.email}>\n",
        target_changes,
        author=MIMI,
        name=B836C,
    )
    b.commit(
        f"fs: stat: document vfs_getattr\n\nSigned-off-by: {DEV.name} <{DEV.email}>\n",
        edit(
            b,
            m,
            "fs/stat.c",
            "EXPORT_SYMBOL(vfs_getattr_nosec);\n\n",
            "EXPORT_SYMBOL(vfs_getattr_nosec);\n\n"
            "/*\n * vfs_getattr - getattr with security checks\n */\n",
        ),
        author=DEV,
        name="stat-doc",
    )
    db1d1 = b.ids[DB1D1]
    b.commit(
        "fs: Pass AT_GETATTR_NOSEC flag to getattr interface function\n\n"
        "When vfs_getattr_nosec() calls a filesystem's getattr interface function\n"
        "then the 'nosec' should propagate into this function so that\n"
        "vfs_getattr_nosec() can again be called from the filesystem's gettattr\n"
        "rather than vfs_getattr(). The latter would cause a security check, which\n"
        "is not desired.\n\n"
        "Reported-by: syzbot+a67fc5321ffb4b311c98@syzkaller.appspotmail.com\n"
        f'Fixes: {short(db1d1)} ("IMA: use vfs_getattr_nosec to get the i_version")\n'
        "Cc: stable@vger.kernel.org\n"
        f"Signed-off-by: {STEFAN.name} <{STEFAN.email}>\n"
        "Link: https://lore.kernel.org/r/20231002125733.1251467-1-stefanb@linux.vnet.ibm.com\n",
        edits(
            b,
            m,
            (
                "fs/stat.c",
                "\t}\n\tif (inode->i_op->getattr)\n"
                "\t\treturn inode->i_op->getattr(path, stat, request_mask,\n"
                "\t\t\t\t\t    query_flags);\n",
                "\t}\n\tif (inode->i_op->getattr) {\n"
                "\t\tquery_flags |= AT_GETATTR_NOSEC;\n"
                "\t\treturn inode->i_op->getattr(path, stat, request_mask,\n"
                "\t\t\t\t\t    query_flags);\n\t}\n",
            ),
            (
                "fs/stat.c",
                "\tint retval;\n\n\tretval = security_inode_getattr(path);\n",
                "\tint retval;\n\n"
                "\tif (WARN_ON_ONCE(query_flags & AT_GETATTR_NOSEC))\n"
                "\t\treturn -EPERM;\n\n"
                "\tretval = security_inode_getattr(path);\n",
            ),
            (
                "include/uapi/linux/fcntl.h",
                "#define AT_RECURSIVE\t\t0x8000\t/* Apply to the entire subtree */\n",
                "#define AT_RECURSIVE\t\t0x8000\t/* Apply to the entire subtree */\n\n"
                "/* Flags for internal use */\n"
                "#define AT_GETATTR_NOSEC\t0x80000000\n",
            ),
            (
                "fs/overlayfs/inode.c",
                "\terr = vfs_getattr(&realpath, stat, request_mask, flags);\n",
                "\terr = ovl_do_getattr(&realpath, stat, request_mask, flags);\n",
            ),
            (
                "fs/ecryptfs/inode.c",
                "\trc = vfs_getattr(ecryptfs_dentry_to_lower_path(dentry), &lower_stat,\n",
                "\trc = ecryptfs_do_getattr(ecryptfs_dentry_to_lower_path(dentry), &lower_stat,\n",
            ),
        ),
        author=STEFAN,
        name=F8A92,
    )
    b.commit(
        "Linux 6.7",
        edit(b, m, "Makefile", "VERSION = 5\nPATCHLEVEL = 10\n", "VERSION = 6\nPATCHLEVEL = 7\n"),
        author=LINUS,
        name="v6.7",
    )
    b.tag("v6.7", m)
    return target_changes

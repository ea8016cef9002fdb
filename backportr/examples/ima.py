"""The IMA/overlayfs backport of December 2023, rebuilt as a small kernel-shaped repository.

Upstream `b836c4d29f27` ("ima: detect changes to the backing overlay file") reached 5.10.202
as `cd5a262a07a5`, adapted by hand, and fixed nothing there: it needs `db1d1e8b9867` ("IMA:
use vfs_getattr_nosec to get the i_version") and `a1175d6b1bda` ("vfs: plumb i_version
handling into struct kstat"), and `8a924db2d7b5` ("fs: Pass AT_GETATTR_NOSEC flag to getattr
interface function") carries `Fixes: db1d1e8b9867`. The change that started it,
`18b44bc5a672` ("ovl: Always reevaluate the file signature for IMA"), reached 5.10.194 as
`331d85f0bc6e`.

The real ids cannot be reproduced, so commits are named by their real subjects (and their
real short ids as names in `ids`); the C files are small stand-ins written for this fixture.
The build is deterministic: the same ids every time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backportr.builder import Person, RepoBuilder

JEFF = Person("Jeff Layton", "jlayton@kernel.org")
MIMI = Person("Mimi Zohar", "zohar@linux.ibm.com")
ERIC = Person("Eric Snowberg", "eric.snowberg@oracle.com")
STEFAN = Person("Stefan Berger", "stefanb@linux.ibm.com")
LINUS = Person("Linus Torvalds", "torvalds@linux-foundation.org")
GREG = Person("Greg Kroah-Hartman", "gregkh@linuxfoundation.org")
DEV = Person("Kernel Developer", "dev@example.org")

IVERSION_INLINE = """static inline u64 inode_query_iversion(struct inode *inode)
{
\treturn atomic64_read(&inode->i_version) >> I_VERSION_QUERIED_SHIFT;
}
"""
IVERSION_H = (
    """/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_IVERSION_H
#define _LINUX_IVERSION_H

#include <linux/fs.h>

/*
 * The change attribute (i_version) is mandated by NFSv4 and is mostly for
 * knfsd, but is also used for other purposes (e.g. IMA).
 */
#define I_VERSION_QUERIED_SHIFT\t(1)

"""
    + IVERSION_INLINE
    + "\n#endif\n"
)
LIBFS_END = "EXPORT_SYMBOL(simple_statfs);\n"
LIBFS_C = """// SPDX-License-Identifier: GPL-2.0-only
#include <linux/fs.h>

int simple_statfs(struct dentry *dentry, struct kstatfs *buf)
{
\tbuf->f_type = dentry->d_sb->s_magic;
\treturn 0;
}
EXPORT_SYMBOL(simple_statfs);
"""
LIBFS_QUERY = """u64 inode_query_iversion(struct inode *inode)
{
\treturn atomic64_read(&inode->i_version) >> I_VERSION_QUERIED_SHIFT;
}
EXPORT_SYMBOL(inode_query_iversion);
"""
STAT_H = """\
/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_STAT_H
#define _LINUX_STAT_H

#include <asm/stat.h>
#include <uapi/linux/stat.h>

struct kstat {
	u32		result_mask;	/* What fields the user got */
	umode_t		mode;
	unsigned int	nlink;
	uint32_t	blksize;	/* Preferred I/O size */
	u64		attributes;
	u64		attributes_mask;
	u64		ino;
	dev_t		dev;
	dev_t		rdev;
	kuid_t		uid;
	kgid_t		gid;
	loff_t		size;
	struct timespec64 atime;
	struct timespec64 mtime;
	struct timespec64 ctime;
	struct timespec64 btime;			/* File creation time */
	u64		blocks;
	u64		mnt_id;
};

#endif
"""

STAT_C = """\
// SPDX-License-Identifier: GPL-2.0
/*
 *  linux/fs/stat.c
 */

#include <linux/export.h>
#include <linux/mm.h>
#include <linux/fs.h>
#include <linux/security.h>

void generic_fillattr(struct inode *inode, struct kstat *stat)
{
	stat->dev = inode->i_sb->s_dev;
	stat->ino = inode->i_ino;
	stat->mode = inode->i_mode;
	stat->nlink = inode->i_nlink;
	stat->uid = inode->i_uid;
	stat->gid = inode->i_gid;
	stat->rdev = inode->i_rdev;
	stat->size = i_size_read(inode);
	stat->blksize = i_blocksize(inode);
	stat->blocks = inode->i_blocks;
}
EXPORT_SYMBOL(generic_fillattr);

/**
 * vfs_getattr_nosec - getattr without security checks
 * @path: file to get attributes from
 * @stat: structure to return attributes in
 * @request_mask: STATX_xxx flags indicating what the caller wants
 * @query_flags: Query mode (AT_STATX_SYNC_TYPE)
 */
int vfs_getattr_nosec(const struct path *path, struct kstat *stat,
		      u32 request_mask, unsigned int query_flags)
{
	struct inode *inode = d_backing_inode(path->dentry);

	memset(stat, 0, sizeof(*stat));
	stat->result_mask |= STATX_BASIC_STATS;
	query_flags &= AT_STATX_SYNC_TYPE;

	/* allow the fs to override these if it really wants to */
	/* SB_NOATIME means filesystem supplies dummy atime value */
	if (inode->i_sb->s_flags & SB_NOATIME)
		stat->result_mask &= ~STATX_ATIME;
	if (IS_AUTOMOUNT(inode))
		stat->attributes |= STATX_ATTR_AUTOMOUNT;

	if (IS_DAX(inode))
		stat->attributes |= STATX_ATTR_DAX;
	if (inode->i_op->getattr)
		return inode->i_op->getattr(path, stat, request_mask,
					    query_flags);

	generic_fillattr(inode, stat);
	return 0;
}
EXPORT_SYMBOL(vfs_getattr_nosec);

int vfs_getattr(const struct path *path, struct kstat *stat,
		u32 request_mask, unsigned int query_flags)
{
	int retval;

	retval = security_inode_getattr(path);
	if (retval)
		return retval;
	return vfs_getattr_nosec(path, stat, request_mask, query_flags);
}
EXPORT_SYMBOL(vfs_getattr);
"""

FCNTL_H = """\
/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_FCNTL_H
#define _UAPI_LINUX_FCNTL_H

#define AT_STATX_SYNC_TYPE	0x6000	/* Type of synchronisation required from statx() */
#define AT_STATX_SYNC_AS_STAT	0x0000	/* - Do whatever stat() does */
#define AT_STATX_FORCE_SYNC	0x2000	/* - Force the attributes to be sync'd with the server */
#define AT_STATX_DONT_SYNC	0x4000	/* - Don't sync attributes with the server */

#define AT_RECURSIVE		0x8000	/* Apply to the entire subtree */

#endif /* _UAPI_LINUX_FCNTL_H */
"""

OVL_INODE_C = """\
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2011 Novell Inc.
 */

#include <linux/fs.h>
#include "overlayfs.h"

int ovl_getattr(const struct path *path, struct kstat *stat,
		u32 request_mask, unsigned int flags)
{
	struct dentry *dentry = path->dentry;
	enum ovl_path_type type;
	struct path realpath;
	const struct cred *old_cred;
	int err;

	type = ovl_path_real(dentry, &realpath);
	old_cred = ovl_override_creds(dentry->d_sb);
	err = vfs_getattr(&realpath, stat, request_mask, flags);
	if (err)
		goto out;

	stat->dev = dentry->d_sb->s_dev;
	stat->ino = dentry->d_inode->i_ino;
out:
	revert_creds(old_cred);

	return err;
}
"""

OVL_SUPER_C = """\
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2011 Novell Inc.
 */

#include <linux/fs.h>
#include "overlayfs.h"

static int ovl_fill_super(struct super_block *sb, void *data, int silent)
{
	struct ovl_fs *ofs = sb->s_fs_info;
	struct dentry *root_dentry;
	int err;

	sb->s_d_op = &ovl_dentry_operations;
	sb->s_op = &ovl_super_operations;
	sb->s_xattr = ovl_xattr_handlers;
	sb->s_fs_info = ofs;
	sb->s_flags |= SB_POSIXACL;
	sb->s_iflags |= SB_I_SKIP_SYNC;

	err = -ENOMEM;
	root_dentry = ovl_get_root(sb, ofs->upper_mnt);
	if (!root_dentry)
		goto out_free_oe;

	sb->s_root = root_dentry;
	return 0;

out_free_oe:
	return err;
}
"""

INTEGRITY_H = """\
/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2009-2010 IBM Corporation
 */

#include <linux/types.h>
#include <linux/integrity.h>

/* integrity data associated with an inode */
struct integrity_iint_cache {
	struct rb_node rb_node;	/* rooted in integrity_iint_tree */
	struct mutex mutex;	/* protects: version, flags, digest */
	struct inode *inode;	/* back pointer to inode in question */
	u64 version;		/* track inode changes */
	unsigned long flags;
	unsigned long measured_pcrs;
	unsigned long atomic_flags;
	enum integrity_status ima_file_status:4;
	enum integrity_status ima_mmap_status:4;
	enum integrity_status ima_bprm_status:4;
	enum integrity_status ima_read_status:4;
	enum integrity_status ima_creds_status:4;
	enum integrity_status evm_status:4;
	struct ima_digest_data *ima_hash;
};
"""

IMA_API_C = """\
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2008 IBM Corporation
 *
 * Author: Mimi Zohar <zohar@us.ibm.com>
 */

#include <linux/slab.h>
#include <linux/file.h>
#include <linux/fs.h>

#include "ima.h"

/*
 * ima_collect_measurement - collect file measurement
 *
 * Calculate the file hash, if it doesn't already exist,
 * storing the measurement and i_version in the iint.
 */
int ima_collect_measurement(struct integrity_iint_cache *iint,
			    struct file *file, void *buf, loff_t size,
			    enum hash_algo algo, struct modsig *modsig)
{
	const char *audit_cause = "failed";
	struct inode *inode = file_inode(file);
	const char *filename = file->f_path.dentry->d_name.name;
	int result = 0;
	int length;
	void *tmpbuf;
	u64 i_version;
	struct {
		struct ima_digest_data hdr;
		char digest[IMA_MAX_DIGEST_SIZE];
	} hash;

	/*
	 * Always collect the modsig, because IMA might have already collected
	 * the file digest without collecting the modsig in a previous
	 * measurement rule.
	 */
	if (modsig)
		ima_collect_modsig(modsig, buf, size);

	if (iint->flags & IMA_COLLECTED)
		goto out;

	/*
	 * Dectecting file change is based on i_version. On filesystems
	 * which do not support i_version, support is limited to an initial
	 * measurement/appraisal/audit.
	 */
	i_version = inode_query_iversion(inode);
	hash.hdr.algo = algo;

	/* Initialize hash digest to 0's in case of failure */
	memset(&hash.digest, 0, sizeof(hash.digest));

	if (buf)
		result = ima_calc_buffer_hash(buf, size, &hash.hdr);
	else
		result = ima_calc_file_hash(file, &hash.hdr);

	if (result && result != -EBADF && result != -EINVAL)
		goto out;

	length = sizeof(hash.hdr) + hash.hdr.length;
	tmpbuf = krealloc(iint->ima_hash, length, GFP_NOFS);
	if (!tmpbuf) {
		result = -ENOMEM;
		goto out;
	}

	iint->ima_hash = tmpbuf;
	memcpy(iint->ima_hash, &hash, length);
	iint->version = i_version;

	/* Possibly temporary failure due to type of read (eg. O_DIRECT) */
	if (!result)
		iint->flags |= IMA_COLLECTED;
out:
	if (result) {
		if (file->f_flags & O_DIRECT)
			audit_cause = "failed(directio)";

		integrity_audit_msg(AUDIT_INTEGRITY_DATA, inode,
				    filename, "collect_data", audit_cause,
				    result, 0);
	}
	return result;
}
"""

IMA_MAIN_C = """\
// SPDX-License-Identifier: GPL-2.0-only
/*
 * Integrity Measurement Architecture
 *
 * Copyright (C) 2005,2006,2007,2008 IBM Corporation
 */

#include <linux/module.h>
#include <linux/file.h>
#include <linux/binfmts.h>
#include <linux/mount.h>
#include <linux/mman.h>
#include <linux/slab.h>
#include <linux/xattr.h>
#include <linux/ima.h>
#include <linux/fs.h>

#include "ima.h"

static void ima_check_last_writer(struct integrity_iint_cache *iint,
				  struct inode *inode, struct file *file)
{
	fmode_t mode = file->f_mode;
	bool update;

	if (!(mode & FMODE_WRITE))
		return;

	mutex_lock(&iint->mutex);
	if (atomic_read(&inode->i_writecount) == 1) {
		update = test_and_clear_bit(IMA_UPDATE_XATTR,
					    &iint->atomic_flags);
		if (!IS_I_VERSION(inode) ||
		    !inode_eq_iversion(inode, iint->version) ||
		    (iint->flags & IMA_NEW_FILE)) {
			iint->flags &= ~(IMA_DONE_MASK | IMA_NEW_FILE);
			iint->measured_pcrs = 0;
			if (update)
				ima_update_xattr(iint, file);
		}
	}
	mutex_unlock(&iint->mutex);
}

static int process_measurement(struct file *file, const struct cred *cred,
			       u32 secid, char *buf, loff_t size, int mask,
			       enum ima_hooks func)
{
	struct inode *inode = file_inode(file);
	struct integrity_iint_cache *iint = NULL;
	struct ima_template_desc *template_desc = NULL;
	char *pathbuf = NULL;
	int rc = 0, action, must_appraise = 0;

	if (!ima_policy_flag || !S_ISREG(inode->i_mode))
		return 0;

	action = ima_get_action(inode, cred, secid, mask, func, &pcr,
				&template_desc, NULL);
	if (!action)
		return 0;

	iint = integrity_inode_get(inode);
	if (!iint)
		rc = -ENOMEM;

	mutex_lock(&iint->mutex);

	if (test_and_clear_bit(IMA_CHANGE_ATTR, &iint->atomic_flags))
		/* reset appraisal flags if ima_inode_post_setattr was called */
		iint->flags &= ~(IMA_APPRAISE | IMA_APPRAISED |
				 IMA_APPRAISE_SUBMASK | IMA_APPRAISED_SUBMASK |
				 IMA_ACTION_FLAGS);

	/*
	 * Re-evaulate the file if either the xattr has changed or the
	 * kernel has no way of detecting file change on the filesystem.
	 * (Limited to privileged mounted filesystems.)
	 */
	if (test_and_clear_bit(IMA_CHANGE_XATTR, &iint->atomic_flags) ||
	    ((inode->i_sb->s_iflags & SB_I_IMA_UNVERIFIABLE_SIGNATURE) &&
	     !(inode->i_sb->s_iflags & SB_I_UNTRUSTED_MOUNTER) &&
	     !(action & IMA_FAIL_UNVERIFIABLE_SIGS))) {
		iint->flags &= ~IMA_DONE_MASK;
		iint->measured_pcrs = 0;
	}

	/* Determine if already appraised/measured based on bitmask
	 * (IMA_MEASURE, IMA_MEASURED, IMA_XXXX_APPRAISE, IMA_XXXX_APPRAISED,
	 *  IMA_AUDIT, IMA_AUDITED)
	 */
	iint->flags |= action;
	action &= IMA_DO_MASK;
	action &= ~((iint->flags & (IMA_DONE_MASK ^ IMA_MEASURED)) >> 1);

	mutex_unlock(&iint->mutex);
	return rc;
}
"""

ECRYPTFS_INODE_C = """\
// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * eCryptfs: Linux filesystem encryption layer
 */

#include <linux/fs.h>
#include "ecryptfs_kernel.h"

static int ecryptfs_getattr(const struct path *path, struct kstat *stat,
			    u32 request_mask, unsigned int flags)
{
	struct dentry *dentry = path->dentry;
	struct kstat lower_stat;
	int rc;

	rc = vfs_getattr(ecryptfs_dentry_to_lower_path(dentry), &lower_stat,
			 request_mask, flags);
	if (!rc) {
		fsstack_copy_attr_all(d_inode(dentry),
				      ecryptfs_inode_to_lower(d_inode(dentry)));
		generic_fillattr(d_inode(dentry), stat);
		stat->blocks = lower_stat.blocks;
	}
	return rc;
}
"""

MAKEFILE = (
    "VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 0\nEXTRAVERSION =\nNAME = Kleptomaniac Octopus\n"
)

# Real upstream ids, used as names: ids["b836c4d29f27"] is the fixture's commit of that subject.
A1175 = "a1175d6b1bda"
DB1D1 = "db1d1e8b9867"
OVL18 = "18b44bc5a672"
B836C = "b836c4d29f27"
F8A92 = "8a924db2d7b5"
BP_194 = "331d85f0bc6e"
BP_202 = "cd5a262a07a5"


# What b836c4d29f27 adds to ima_collect_measurement: upstream after `struct kstat stat;`
# (from db1d1e8b9867), in the hand-adapted 5.10 backport after `struct inode *inode`.
REAL_INODE_DECLARATION = "\tstruct inode *real_inode = d_real_inode(file_dentry(file));\n"
SAVE_VERSION = "\tiint->version = i_version;\n"
SAVE_REAL_INODE = (
    "\tif (real_inode != inode) {\n"
    "\t\tiint->real_ino = real_inode->i_ino;\n"
    "\t\tiint->real_dev = real_inode->i_sb->s_dev;\n"
    "\t}\n"
)
INODE_DECLARATION = "\tstruct inode *inode = file_inode(file);\n"


@dataclass(frozen=True)
class ImaFixture:
    path: Path
    ids: dict[str, str]

    @property
    def expected_incomplete(self) -> list[str]:
        """At 5.10.202: the missing members of b836c4d29f27, in order."""
        return [self.ids[A1175], self.ids[DB1D1], self.ids[F8A92]]

    @property
    def expected_ready(self) -> list[str]:
        """At 5.10.194: the whole series, in order."""
        return [self.ids[A1175], self.ids[DB1D1], self.ids[B836C], self.ids[F8A92]]


def _release(b: RepoBuilder, branch: str, previous: int, sublevel: int) -> None:
    """A stable release commit ("Linux 5.10.194"), tagged when it is a state of the case."""
    name = f"v5.10.{sublevel}"
    b.commit(
        f"Linux 5.10.{sublevel}",
        _edit(b, branch, "Makefile", f"SUBLEVEL = {previous}", f"SUBLEVEL = {sublevel}"),
        branch=branch,
        committer=GREG,
        author=GREG,
        name=name,
    )
    if sublevel in (194, 202):
        b.tag(name, branch)


def _edit(b: RepoBuilder, branch: str, path: str, old: str, new: str) -> dict[str, str | None]:
    text = b.files(branch)[path]
    if old not in text:
        raise ValueError(f"fixture edit does not match in {path}: {old!r}")
    return {path: text.replace(old, new, 1)}


def _edits(b: RepoBuilder, branch: str, *changes: tuple[str, str, str]) -> dict[str, str | None]:
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
    *edits: tuple[str, str, str],
    new_file: tuple[str, str] | None = None,
) -> None:
    """Patch `number`/8 of the i_version posting, applied with its `Link:`."""
    files = _edits(b, "master", *edits) if edits else {}
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


def build(path: str | Path) -> ImaFixture:
    """Build the repository at `path` (which must not exist yet)."""
    b = RepoBuilder(path)
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
        _edit(
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
        _edit(
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
        _edits(
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
        _edits(
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
        _edit(
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
        _edit(
            b,
            m,
            "security/integrity/ima/ima_main.c",
            "\tmutex_lock(&iint->mutex);\n\n",
            "\tmutex_lock_nested(&iint->mutex, 0);\n\n",
        ),
        author=DEV,
        name="ima-lockdep",
    )
    target_changes = _edits(
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
        _edit(
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
        f'Fixes: {db1d1[:12]} ("IMA: use vfs_getattr_nosec to get the i_version")\n'
        "Cc: stable@vger.kernel.org\n"
        f"Signed-off-by: {STEFAN.name} <{STEFAN.email}>\n"
        "Link: https://lore.kernel.org/r/20231002125733.1251467-1-stefanb@linux.vnet.ibm.com\n",
        _edits(
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
        _edit(b, m, "Makefile", "VERSION = 5\nPATCHLEVEL = 10\n", "VERSION = 6\nPATCHLEVEL = 7\n"),
        author=LINUS,
        name="v6.7",
    )
    b.tag("v6.7", m)

    # -- linux-5.10.y ----------------------------------------------------------------------
    s = "linux-5.10.y"
    _release(b, s, 0, 193)
    b.cherry_pick(OVL18, s, annotation="sasha", name=BP_194)
    _release(b, s, 193, 194)
    # The hand-adapted backport: without db1d1e8b9867 there is no `struct kstat stat;` line,
    # so the declaration of real_inode goes after `inode` and everything else stays the same.
    adapted = dict(target_changes)
    api = b.files(s)["security/integrity/ima/ima_api.c"]
    adapted["security/integrity/ima/ima_api.c"] = api.replace(
        INODE_DECLARATION, INODE_DECLARATION + REAL_INODE_DECLARATION, 1
    ).replace(SAVE_VERSION, SAVE_VERSION + SAVE_REAL_INODE, 1)
    for path in (
        "security/integrity/ima/ima_main.c",
        "fs/overlayfs/super.c",
        "security/integrity/integrity.h",
    ):
        adapted[path] = b.merge_text(
            b.files(f"{b.ids[B836C]}~1")[path], b.files(s)[path], b.files(b.ids[B836C])[path]
        )
    target = b.ids[B836C]
    b.commit(
        "ima: detect changes to the backing overlay file\n\n"
        f"commit {target} upstream.\n\n"
        f'Commit {"18b44bc5a672"} ("ovl: Always reevaluate the file signature for\n'
        'IMA") forced signature re-evaulation on every file access.\n\n'
        "Instead of always re-evaluating the file's integrity, detect a change\n"
        "to the backing file, by comparing the cached file metadata with the\n"
        "backing file's metadata.\n\n"
        "Cc: stable@vger.kernel.org\n"
        f"Signed-off-by: {MIMI.name} <{MIMI.email}>\n"
        f"Signed-off-by: {GREG.name} <{GREG.email}>\n",
        adapted,
        branch=s,
        author=MIMI,
        committer=GREG,
        name=BP_202,
    )
    _release(b, s, 194, 202)
    b.repo.set_head("refs/heads/master")
    return ImaFixture(b.path, dict(b.ids))

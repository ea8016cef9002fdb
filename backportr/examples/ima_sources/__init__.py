"""The IMA example's kernel sources: small stand-ins for the real files (package data read
with importlib.resources), the snippets its commits edit, and the people who wrote them."""

from __future__ import annotations

from importlib.resources import files

from backportr.git.builder import Person


def _source(name: str) -> str:
    """A file of the example's kernel sources (shortened from the real ones), package data."""
    return (files(__name__) / name).read_text(encoding="utf-8")


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
LIBFS_C = _source("libfs.c")
LIBFS_QUERY = """u64 inode_query_iversion(struct inode *inode)
{
\treturn atomic64_read(&inode->i_version) >> I_VERSION_QUERIED_SHIFT;
}
EXPORT_SYMBOL(inode_query_iversion);
"""
STAT_H = _source("stat.h")

STAT_C = _source("stat.c")

FCNTL_H = _source("fcntl.h")

OVL_INODE_C = _source("overlayfs-inode.c")

OVL_SUPER_C = _source("overlayfs-super.c")

INTEGRITY_H = _source("integrity.h")

IMA_API_C = _source("ima_api.c")

IMA_MAIN_C = _source("ima_main.c")

ECRYPTFS_INODE_C = _source("ecryptfs-inode.c")

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

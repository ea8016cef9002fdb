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

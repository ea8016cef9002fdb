// SPDX-License-Identifier: GPL-2.0-only
#include <linux/fs.h>

int simple_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	buf->f_type = dentry->d_sb->s_magic;
	return 0;
}
EXPORT_SYMBOL(simple_statfs);

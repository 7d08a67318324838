/* SPDX-License-Identifier: MIT */
/*
 * noop-plugin.c - a QEMU TCG plugin whose only work is one empty callback
 * per executed translation block: the floor of any exact block profile
 * with QEMU 7.2's plugin API 1 (no conditional callbacks, no per-vCPU
 * inline counters).  Built and used by bench/bbv-speed.sh.
 */
#include "qemu_api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

static void on_exec(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	(void)udata;
}

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_exec,
					     QEMU_PLUGIN_CB_NO_REGS, NULL);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info, int argc,
					   char **argv)
{
	(void)info;
	(void)argc;
	(void)argv;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
	return 0;
}

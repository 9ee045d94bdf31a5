/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * place_priv.h - what the parts of placement (sysfs.c, topology.c, plan.c,
 * place.c) share inside libxnf.
 */
#ifndef XNF_PLACE_PRIV_H
#define XNF_PLACE_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "placement.h"

#define for_each_cpu(cpu, set)                              \
	for ((cpu) = xnf_cpuset_next((set), 0); (cpu) >= 0; \
	     (cpu) = xnf_cpuset_next((set), (cpu) + 1))

/* sysfs.c */
bool sysfs_is_real(const char *root);
void sysfs_path(char *buf, size_t len, const char *root, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int sysfs_read_cpuset(const char *root, struct xnf_cpuset *s, const char *fmt,
		      ...) __attribute__((format(printf, 3, 4)));
int sysfs_read_int(const char *root, int *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int sysfs_read_path(const char *path, char *buf, size_t len);
int sysfs_read_str(const char *root, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
char *sysfs_slurp(const char *path);
int sysfs_write(const char *path, const char *val);

/* topology.c */
int topo_channels_get(const char *root, const char *dev, struct xnf_channels *ch);
int topo_channels_set(const char *root, const char *dev,
		      const struct xnf_channels *want);
void topo_read_napi(const char *root, struct xnf_nic *nic);
int topo_thread_set_affinity(const char *root, int pid,
			     const struct xnf_cpuset *s);

#endif /* XNF_PLACE_PRIV_H */

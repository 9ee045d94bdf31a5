/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * place_priv.h - what the parts of placement (sysfs.c, topology.c, plan.c,
 * place.c) share inside libxnf.
 */
#ifndef XNF_PLACE_PRIV_H
#define XNF_PLACE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

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

/* netdev.c: netlink requests, and a device as the caller's network
 * namespace has it (see the top of netdev.c). */
struct nl_req {
	struct nlmsghdr nh;
	union {
		struct genlmsghdr gh;
		struct ifinfomsg ifi;
	};
	char attrs[64];
};
#define NL_MAX_ATTR 64
/* Called with each reply and its attributes (below NL_MAX_ATTR). */
typedef void (*nl_cb)(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx);
void nl_put_attr(struct nl_req *r, __u16 type, const void *data, __u16 len);
/* Sends @r; each reply's attributes follow a family header of @hdrlen
 * bytes. 0 after the one reply or the dump's end, or the kernel's -errno. */
int nl_talk(int fd, struct nl_req *r, size_t hdrlen, nl_cb cb, void *ctx);
__u32 nla_u32(const struct nlattr *a);

/* The netdev generic-netlink family (Linux 6.8+ for queues and napi, the
 * thread pid since 6.9). The uapi header is not in every distribution's
 * headers yet; these values are ABI (include/uapi/linux/netdev.h). */
#define XNF_NETDEV_CMD_QUEUE_GET      10
#define XNF_NETDEV_CMD_NAPI_GET	      11
#define XNF_NETDEV_A_QUEUE_ID	      1
#define XNF_NETDEV_A_QUEUE_IFINDEX    2
#define XNF_NETDEV_A_QUEUE_TYPE	      3
#define XNF_NETDEV_A_QUEUE_NAPI_ID    4
#define XNF_NETDEV_QUEUE_TYPE_RX      0
#define XNF_NETDEV_A_NAPI_IFINDEX     1
#define XNF_NETDEV_A_NAPI_ID	      2
#define XNF_NETDEV_A_NAPI_PID	      4
#define XNF_NETDEV_CMD_DEV_GET	      1
#define XNF_NETDEV_A_DEV_IFINDEX      1
#define XNF_NETDEV_A_DEV_XDP_FEATURES 3 /* u64 of NETDEV_XDP_ACT_* */
#define XNF_NETDEV_XDP_ACT_NDO_XMIT   (1ULL << 2)
/* A socket of the family and its id, or -EOPNOTSUPP without one. */
int netdev_genl_open(__u16 *family);
/* Dumps @cmd for the device @ifindex (attribute @ifindex_attr). */
int netdev_genl_dump(int fd, __u16 family, __u8 cmd, __u16 ifindex_attr,
		     __u32 ifindex, nl_cb cb, void *ctx);

/* The XDP features of the device @ifindex (Linux 6.3+): -EOPNOTSUPP on
 * a kernel that does not say. */
int netdev_xdp_features(__u32 ifindex, __u64 *features);

struct netdev_link {
	__u32 ifindex;
	unsigned int flags;	/* IFF_* */
	__u32 num_rx, num_tx;	/* queues it was made with */
	unsigned char addr[32]; /* IFLA_ADDRESS */
	int addr_len;
};
/* RTM_GETLINK of @dev: -ENODEV when this namespace has none. */
int netdev_link_get(const char *dev, struct netdev_link *l);
/* The receive and transmit queues in use (xnf_dev_queues). */
int netdev_queues(const char *dev, const struct netdev_link *l, int *nrx,
		  int *ntx);
bool netdev_sysfs_ours(const char *dev, const struct netdev_link *l);
/* The sysfs directory of @dev's bus device ("" if none):
 * /sys/class/net/DEV/device when @sysfs_ours, else found in /sys/bus/ by
 * the bus address ethtool gives. */
void netdev_device_dir(const char *dev, bool sysfs_ours, char *buf, size_t len);
/* Reads (@val NULL: into *@v) or writes /sys/class/net/@dev/@file of the
 * caller's network namespace: below @root in a fixture, else /sys when it
 * shows this namespace's @dev, else a sysfs a child process mounts. */
int netdev_attr(const char *root, const char *dev, const char *file,
		const char *val, int *v);

#endif /* XNF_PLACE_PRIV_H */

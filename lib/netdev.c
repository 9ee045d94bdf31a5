// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * netdev.c - a device as the caller's network namespace has it: asked of
 * the kernel over rtnetlink, the netdev generic-netlink family and ethtool,
 * which all answer for the namespace of the asking socket.
 *
 * /sys/class/net is not that: a sysfs shows the network namespace of the
 * process that mounted it. `ip netns exec NS` mounts a fresh one, so there
 * it matches; `nsenter --net=/run/netns/NS` keeps the host's /sys, where
 * the device is missing, or is another device of the same name. So the
 * ifindex, the queue counts and the bus device come from here, and a file
 * that only /sys/class/net/DEV has (threaded) is read from a sysfs of this
 * namespace (netdev_attr).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

#include "xnf.h"
#include "placement.h"

#include "place_priv.h"

/* ---- netlink ---- */

void nl_put_attr(struct nl_req *r, __u16 type, const void *data, __u16 len)
{
	struct nlattr *a = (void *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

int nl_talk(int fd, struct nl_req *r, size_t hdrlen, nl_cb cb, void *ctx)
{
	struct nlattr *tb[NL_MAX_ATTR], *a;
	struct nlmsghdr *nh;
	int err = 0, rem;
	ssize_t n;
	char *buf;

	/* A dump sends up to 32 KiB per datagram when the reader offers
	 * that much. */
	buf = malloc(65536);
	if (!buf)
		return -ENOMEM;
	if (send(fd, r, r->nh.nlmsg_len, 0) < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		n = recv(fd, buf, 65536, 0);
		if (n < 0) {
			err = -errno;
			goto out;
		}
		for (nh = (void *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE)
				goto out;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(nh);

				err = e->error;
				if (err || !(r->nh.nlmsg_flags & NLM_F_DUMP))
					goto out;
				continue;
			}
			memset(tb, 0, sizeof(tb));
			rem = (int)nh->nlmsg_len - NLMSG_LENGTH(hdrlen);
			for (a = (void *)((char *)NLMSG_DATA(nh) +
					  NLMSG_ALIGN(hdrlen));
			     rem >= (int)NLA_HDRLEN &&
			     a->nla_len >= NLA_HDRLEN && a->nla_len <= rem;
			     rem -= NLA_ALIGN(a->nla_len),
			    a = (void *)((char *)a + NLA_ALIGN(a->nla_len)))
				if ((a->nla_type & NLA_TYPE_MASK) < NL_MAX_ATTR)
					tb[a->nla_type & NLA_TYPE_MASK] = a;
			cb(nh, tb, ctx);
			if (!(r->nh.nlmsg_flags & NLM_F_DUMP))
				goto out;
		}
		/* The one reply did not fit: never wait for another. */
		if (!(r->nh.nlmsg_flags & NLM_F_DUMP)) {
			err = -EMSGSIZE;
			goto out;
		}
	}
out:
	free(buf);
	return err;
}

__u32 nla_u32(const struct nlattr *a)
{
	__u32 v = 0;

	if (a && a->nla_len >= NLA_HDRLEN + 4)
		memcpy(&v, (const char *)a + NLA_HDRLEN, 4);
	return v;
}

static void family_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	const struct nlattr *a = tb[CTRL_ATTR_FAMILY_ID];

	if (a && a->nla_len >= NLA_HDRLEN + 2)
		memcpy(ctx, (const char *)a + NLA_HDRLEN, 2);
}

int netdev_genl_open(__u16 *family)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nl_req r = {};
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	*family = 0;
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = GENL_ID_CTRL;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.gh.cmd = CTRL_CMD_GETFAMILY;
	r.gh.version = 1;
	nl_put_attr(&r, CTRL_ATTR_FAMILY_NAME, "netdev", sizeof("netdev"));
	err = nl_talk(fd, &r, GENL_HDRLEN, family_cb, family);
	if (err || !*family) {
		close(fd);
		return -EOPNOTSUPP;
	}
	return fd;
}

int netdev_genl_dump(int fd, __u16 family, __u8 cmd, __u16 ifindex_attr,
		     __u32 ifindex, nl_cb cb, void *ctx)
{
	struct nl_req r = {};

	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = family;
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	r.gh.cmd = cmd;
	r.gh.version = 1;
	nl_put_attr(&r, ifindex_attr, &ifindex, 4);
	return nl_talk(fd, &r, GENL_HDRLEN, cb, ctx);
}

static void features_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	const struct nlattr *a = tb[XNF_NETDEV_A_DEV_XDP_FEATURES];

	if (a && a->nla_len >= NLA_HDRLEN + 8)
		memcpy(ctx, (const char *)a + NLA_HDRLEN, 8);
}

int netdev_xdp_features(__u32 ifindex, __u64 *features)
{
	struct nl_req r = {};
	__u16 family;
	int fd, err;

	*features = ~0ULL;
	fd = netdev_genl_open(&family);
	if (fd < 0)
		return fd;
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = family;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	r.gh.cmd = XNF_NETDEV_CMD_DEV_GET;
	r.gh.version = 1;
	nl_put_attr(&r, XNF_NETDEV_A_DEV_IFINDEX, &ifindex, 4);
	err = nl_talk(fd, &r, GENL_HDRLEN, features_cb, features);
	close(fd);
	if (!err && *features == ~0ULL)
		err = -EOPNOTSUPP;
	return err;
}

/* ---- the link (rtnetlink) ---- */

static void link_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(nh);
	const struct nlattr *a = tb[IFLA_ADDRESS];
	struct netdev_link *l = ctx;

	if (nh->nlmsg_type != RTM_NEWLINK ||
	    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return;
	l->ifindex = ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	l->num_rx = nla_u32(tb[IFLA_NUM_RX_QUEUES]);
	l->num_tx = nla_u32(tb[IFLA_NUM_TX_QUEUES]);
	if (a && (size_t)(a->nla_len - NLA_HDRLEN) <= sizeof(l->addr)) {
		l->addr_len = a->nla_len - NLA_HDRLEN;
		memcpy(l->addr, (const char *)a + NLA_HDRLEN, l->addr_len);
	}
}

/* RTM_GETLINK of @dev, without its statistics. */
static void link_req(struct nl_req *r, const char *dev)
{
	r->nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	r->nh.nlmsg_type = RTM_GETLINK;
	r->nh.nlmsg_flags = NLM_F_REQUEST;
	r->ifi.ifi_family = AF_UNSPEC;
	nl_put_attr(r, IFLA_IFNAME, dev, strlen(dev) + 1);
	nl_put_attr(r, IFLA_EXT_MASK, &(__u32){ RTEXT_FILTER_SKIP_STATS }, 4);
}

int netdev_link_get(const char *dev, struct netdev_link *l)
{
	struct nl_req r = {};
	int fd, err;

	memset(l, 0, sizeof(*l));
	if (strlen(dev) >= IF_NAMESIZE)
		return -ENODEV;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	link_req(&r, dev);
	err = nl_talk(fd, &r, sizeof(struct ifinfomsg), link_cb, l);
	close(fd);
	if (!err && !l->ifindex)
		err = -ENODEV;
	return err;
}

/* ---- queues ---- */

struct queue_count {
	__u32 ifindex;
	int rx, tx;
};

static void queue_count_cb(const struct nlmsghdr *nh, struct nlattr **tb,
			   void *ctx)
{
	struct queue_count *c = ctx;

	if (nla_u32(tb[XNF_NETDEV_A_QUEUE_IFINDEX]) != c->ifindex ||
	    !tb[XNF_NETDEV_A_QUEUE_TYPE])
		return;
	if (nla_u32(tb[XNF_NETDEV_A_QUEUE_TYPE]) == XNF_NETDEV_QUEUE_TYPE_RX)
		c->rx++;
	else
		c->tx++;
}

/*
 * What /sys/class/net/DEV/queues/ lists is the queues in use
 * (real_num_rx_queues, real_num_tx_queues), which rtnetlink does not say:
 * IFLA_NUM_RX_QUEUES is how many the device was made with. The netdev
 * family lists the ones in use (Linux 6.8+), but only of a device that is
 * up; else the channels say it (ethtool: combined + rx-only, as the driver
 * set them); only a device without either keeps the count it was made
 * with, which is what it uses.
 */
int netdev_queues(const char *dev, const struct netdev_link *l, int *nrx, int *ntx)
{
	struct queue_count c = { .ifindex = l->ifindex };
	struct xnf_channels ch;
	__u16 family;
	int fd, err = -EOPNOTSUPP;

	if (l->flags & IFF_UP) {
		fd = netdev_genl_open(&family);
		if (fd >= 0) {
			err = netdev_genl_dump(fd, family,
					       XNF_NETDEV_CMD_QUEUE_GET,
					       XNF_NETDEV_A_QUEUE_IFINDEX,
					       l->ifindex, queue_count_cb, &c);
			close(fd);
		}
	}
	if (!err && c.rx) {
		*nrx = c.rx;
		*ntx = c.tx;
		return 0;
	}
	*nrx = l->num_rx;
	*ntx = l->num_tx;
	if (!topo_channels_get("", dev, &ch)) {
		if (ch.combined + ch.rx)
			*nrx = ch.combined + ch.rx;
		if (ch.combined + ch.tx)
			*ntx = ch.combined + ch.tx;
	}
	return *nrx > 0 ? 0 : -ENOENT;
}

int xnf_dev_queues(const char *dev, int *nrx, int *ntx)
{
	struct netdev_link l;
	int err, tx;

	err = xnf_dev_name_check(dev, NULL, 0) ?: netdev_link_get(dev, &l);
	return err ?: netdev_queues(dev, &l, nrx, ntx ?: &tx);
}

/* ---- what only sysfs has ---- */

/* Whether /sys/class/net/@dev is the caller's @dev: its ifindex and
 * address are the ones rtnetlink gave. (A device of another namespace
 * with the same name, ifindex and MAC would pass: two such devices are
 * made on purpose, never by chance.) */
bool netdev_sysfs_ours(const char *dev, const struct netdev_link *l)
{
	char buf[128], want[3 * sizeof(l->addr) + 1] = "";
	int ifindex, i, n = 0;

	if (sysfs_read_int("", &ifindex, "/sys/class/net/%s/ifindex", dev) ||
	    (__u32)ifindex != l->ifindex ||
	    sysfs_read_str("", buf, sizeof(buf), "/sys/class/net/%s/address", dev))
		return false;
	for (i = 0; i < l->addr_len; i++)
		n += snprintf(want + n, sizeof(want) - n, "%s%02x",
			      i ? ":" : "", l->addr[i]);
	return !strcmp(buf, want);
}

/* ETHTOOL_GDRVINFO of @dev: 0 or a negative errno. */
static int drvinfo(const char *dev, struct ethtool_drvinfo *info)
{
	struct ifreq ifr = {};
	int fd, err = 0;

	memset(info, 0, sizeof(*info));
	info->cmd = ETHTOOL_GDRVINFO;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)info;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	close(fd);
	return err;
}

/* The bus address ethtool gives ("0000:af:00.0", "virtio0"), "" if none. */
static void bus_info(const char *dev, char *buf, size_t len)
{
	struct ethtool_drvinfo info;

	buf[0] = '\0';
	if (!drvinfo(dev, &info))
		snprintf(buf, len, "%.*s", (int)sizeof(info.bus_info),
			 info.bus_info);
}

int xnf_egress_check(const char *dev, __u32 ifindex, char *buf, size_t len)
{
	struct ethtool_drvinfo info;
	__u64 feat;
	int err;

	buf[0] = '\0';
	err = netdev_xdp_features(ifindex, &feat);
	if (err)
		return err;
	if (feat & XNF_NETDEV_XDP_ACT_NDO_XMIT)
		return 0;
	/* A veth transmits XDP frames into its peer's NAPI, which exists
	 * only while the peer runs an XDP program or has GRO on; the kernel
	 * clears NDO_XMIT of this end otherwise (veth_set_xdp_features). */
	if (!drvinfo(dev, &info) && !strcmp(info.driver, "veth"))
		snprintf(buf, len,
			 "%s cannot take redirected frames: its veth peer has "
			 "neither an XDP program nor GRO, so the kernel drops "
			 "every frame xnf redirects to %s (counted as "
			 "redirect_err); turn GRO on at the peer, in its "
			 "namespace: ethtool -K PEER gro on",
			 dev, dev);
	else
		snprintf(buf, len,
			 "%s cannot take redirected frames now (its driver "
			 "does not announce XDP transmit), so the kernel drops "
			 "every frame xnf redirects to %s (counted as "
			 "redirect_err); check 'ip -d link show %s' and the "
			 "driver's XDP support",
			 dev, dev, dev);
	return 1;
}

/* Runs @fn(@arg, @out) in a child process and copies its @out (at most
 * CHILD_OUT bytes) back: for what must not touch the caller (setns and
 * unshare move only the calling thread, and the caller may have others).
 * @fn's result, 0 or a negative errno, or -EIO when the child died. */
#define CHILD_OUT 64
static int run_in_child(int (*fn)(const void *arg, char *out), const void *arg,
			char *out)
{
	struct {
		int ret;
		char out[CHILD_OUT];
	} res = { .ret = -EIO };
	int pfd[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (!pid) {
		/* Only system calls from here: the parent may have threads. */
		close(pfd[0]);
		res.ret = fn(arg, res.out);
		n = write(pfd[1], &res, sizeof(res));
		_exit(n == sizeof(res) ? 0 : 1);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &res, sizeof(res));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != sizeof(res))
		return -EIO;
	memcpy(out, res.out, CHILD_OUT);
	return res.ret;
}

/* ---- a veth sender's checksum offload ---- */

struct link_peer {
	__u32 peer; /* IFLA_LINK: a veth's peer ifindex */
	int nsid;   /* IFLA_LINK_NETNSID, -1: the peer is in this netns */
};

static void link_peer_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	struct link_peer *l = ctx;

	if (nh->nlmsg_type != RTM_NEWLINK)
		return;
	l->peer = nla_u32(tb[IFLA_LINK]);
	if (tb[IFLA_LINK_NETNSID])
		l->nsid = (int)nla_u32(tb[IFLA_LINK_NETNSID]);
}

/* What the route socket @fd says about @dev's link peer. */
static int link_peer_get(int fd, const char *dev, struct link_peer *l)
{
	struct nl_req r = {};

	l->peer = 0;
	l->nsid = -1;
	link_req(&r, dev);
	return nl_talk(fd, &r, sizeof(struct ifinfomsg), link_peer_cb, l);
}

static void nsid_cb(const struct nlmsghdr *nh, struct nlattr **tb, void *ctx)
{
	if (nh->nlmsg_type == RTM_NEWNSID && tb[NETNSA_NSID])
		*(int *)ctx = (int)nla_u32(tb[NETNSA_NSID]);
}

/* The id this netns gives the netns of @nsfd, or -1. */
static int nsid_of(int fd, int nsfd)
{
	struct nl_req r = {};
	__u32 v = nsfd;
	int id = -1;

	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtgenmsg));
	r.nh.nlmsg_type = RTM_GETNSID;
	r.nh.nlmsg_flags = NLM_F_REQUEST;
	nl_put_attr(&r, NETNSA_FD, &v, 4);
	if (nl_talk(fd, &r, sizeof(struct rtgenmsg), nsid_cb, &id))
		return -1;
	return id;
}

/* 1 when the device @ifindex of this netns has tx checksum offload on, 0
 * when off; its name in @name. */
static int tx_csum_here(__u32 ifindex, char name[IF_NAMESIZE])
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GTXCSUM };
	struct ifreq ifr = {};
	int fd, ret;

	if (!if_indextoname(ifindex, name))
		return -errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = (void *)&ev;
	ret = ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : !!ev.data;
	close(fd);
	return ret;
}

struct tx_csum_arg {
	int nsfd;
	__u32 ifindex;
};

/* In the child of tx_csum_in(): @out is the device's name. */
static int tx_csum_child(const void *arg, char *out)
{
	const struct tx_csum_arg *a = arg;

	if (setns(a->nsfd, CLONE_NEWNET))
		return -errno;
	return tx_csum_here(a->ifindex, out);
}

/* tx_csum_here() in the netns @nsfd, from a child. */
static int tx_csum_in(int nsfd, __u32 ifindex, char name[IF_NAMESIZE])
{
	struct tx_csum_arg a = { .nsfd = nsfd, .ifindex = ifindex };
	char out[CHILD_OUT] = "";
	int ret;

	ret = run_in_child(tx_csum_child, &a, out);
	memcpy(name, out, IF_NAMESIZE);
	name[IF_NAMESIZE - 1] = '\0';
	return ret;
}

int xnf_sender_check(const char *dev, char *buf, size_t len)
{
	char name[IF_NAMESIZE] = "", ns[NAME_MAX + 1] = "", path[PATH_MAX];
	struct ethtool_drvinfo info;
	struct link_peer l;
	struct dirent *de;
	int fd, nsfd = -1, ret;
	DIR *d;

	buf[0] = '\0';
	if (drvinfo(dev, &info) || strcmp(info.driver, "veth"))
		return 0;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	ret = link_peer_get(fd, dev, &l);
	if (!ret && !l.peer)
		ret = -ENOENT;
	/* A peer elsewhere: find its netns among the named ones (ip netns)
	 * and the init one, by the id this netns gives it. */
	d = !ret && l.nsid >= 0 ? opendir("/run/netns") : NULL;
	while (d && nsfd < 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		nsfd = open(path, O_RDONLY | O_CLOEXEC);
		if (nsfd >= 0 && nsid_of(fd, nsfd) != l.nsid) {
			close(nsfd);
			nsfd = -1;
		} else if (nsfd >= 0) {
			snprintf(ns, sizeof(ns), "%s", de->d_name);
		}
	}
	if (d)
		closedir(d);
	if (!ret && l.nsid >= 0 && nsfd < 0) {
		nsfd = open("/proc/1/ns/net", O_RDONLY | O_CLOEXEC);
		if (nsfd >= 0 && nsid_of(fd, nsfd) != l.nsid) {
			close(nsfd);
			nsfd = -1;
		}
		if (nsfd < 0)
			ret = -ENOENT; /* an unnamed netns: cannot say */
	}
	close(fd);
	if (!ret)
		ret = nsfd < 0 ? tx_csum_here(l.peer, name) :
				 tx_csum_in(nsfd, l.peer, name);
	if (nsfd >= 0)
		close(nsfd);
	if (ret <= 0)
		return ret;
	snprintf(buf, len,
		 "the veth peer %s of %s sends with tx checksum offload on: "
		 "its TCP/UDP checksums are left to be filled in on the way "
		 "out, which a redirect by XDP never does, so they arrive "
		 "wrong; turn it off at the sender: %s%s%sethtool -K %s tx off",
		 name, dev, *ns ? "ip netns exec " : "", ns, *ns ? " " : "",
		 name);
	return 1;
}

void netdev_device_dir(const char *dev, bool sysfs_ours, char *buf, size_t len)
{
	char bus[ETHTOOL_BUSINFO_LEN + 1], path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	buf[0] = '\0';
	if (sysfs_ours) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/device", dev);
		if (!access(path, F_OK))
			snprintf(buf, len, "%s", path);
		return;
	}
	/* The bus device is in /sys/bus/ of every sysfs, whatever network
	 * namespace it shows. */
	bus_info(dev, bus, sizeof(bus));
	if (!*bus || strchr(bus, '/') || !strcmp(bus, ".") || !strcmp(bus, ".."))
		return;
	d = opendir("/sys/bus");
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/%s/devices/%s",
			 de->d_name, bus);
		if (!access(path, F_OK)) {
			snprintf(buf, len, "%s", path);
			break;
		}
	}
	closedir(d);
}

/*
 * /sys/class/net/@dev/@file of the caller's network namespace, from a
 * child process: sysfs shows the namespace of whoever mounts it, so the
 * child makes a mount namespace of its own (private, so that nothing
 * propagates back), mounts a sysfs over /sys there, reads or writes the
 * file, and exits, taking the mount with it. This is for `threaded`, the
 * device-wide switch of threaded NAPI: the netdev family has it only per
 * NAPI, and only on recent kernels (NETDEV_A_NAPI_THREADED), while a veth
 * has no NAPI to set before XDP is attached, and makes new ones at every
 * attach, which take the device's setting.
 */
struct attr_arg {
	const char *path, *val;
};

static int attr_child(const void *arg, char *out)
{
	const struct attr_arg *a = arg;

	/* EBUSY: this very sysfs is on /sys already (the kernel refuses to
	 * stack a superblock on itself), so it is ours. */
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    (mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NOEXEC, NULL) &&
	     errno != EBUSY))
		return -errno;
	if (a->val)
		return sysfs_write(a->path, a->val);
	return sysfs_read_path(a->path, out, CHILD_OUT);
}

static int attr_private(const char *path, const char *val, char *buf, size_t len)
{
	struct attr_arg a = { .path = path, .val = val };
	char out[CHILD_OUT] = "";
	int err;

	err = run_in_child(attr_child, &a, out);
	if (!err && buf)
		snprintf(buf, len, "%s", out);
	return err;
}

int netdev_attr(const char *root, const char *dev, const char *file,
		const char *val, int *v)
{
	char path[PATH_MAX], buf[64], *end;
	struct netdev_link l;
	long n;
	int err;

	sysfs_path(path, sizeof(path), root, "/sys/class/net/%s/%s", dev, file);
	if (!*path)
		return -ENAMETOOLONG;
	if (!sysfs_is_real(root) ||
	    (!netdev_link_get(dev, &l) && netdev_sysfs_ours(dev, &l)))
		err = val ? sysfs_write(path, val) :
			    sysfs_read_path(path, buf, sizeof(buf));
	else
		err = attr_private(path, val, buf, sizeof(buf));
	if (err || val)
		return err;
	errno = 0;
	n = strtol(buf, &end, 0);
	if (errno || end == buf || *end || n < INT_MIN || n > INT_MAX)
		return -EINVAL;
	*v = n;
	return 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Parsing and printing the nouns of the xnf command line; see cli.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "cli.h"

static int parse_ulong(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return (errno || *end || *v > max) ? -1 : 0;
}

int parse_u32(const char *s, const char *what, __u32 *v)
{
	unsigned long n;

	if (parse_ulong(s, 0xffffffffUL, &n))
		return cli_err("invalid %s '%s': expected a number 0..4294967295",
			       what, s);
	*v = n;
	return 0;
}

int parse_addr(const char *s, int *family, __u8 addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = XNF_AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = XNF_AF_INET6;
		return 0;
	}
	return cli_err("invalid address '%s': expected IPv4 (192.0.2.1) or "
		       "IPv6 (2001:db8::1)",
		       s);
}

int parse_prefix(const char *s, int *family, __u8 addr[16], __u32 *plen)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	unsigned long len;
	__u32 max, i;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return cli_err("invalid prefix '%s'", s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (parse_addr(buf, family, addr))
		return -1;
	max = *family == XNF_AF_INET ? 32 : 128;
	if (slash && parse_ulong(slash + 1, max, &len))
		return cli_err("invalid prefix length in '%s': expected 0..%u",
			       s, max);
	*plen = slash ? len : max;
	for (i = *plen; i < max; i++) {
		if (addr[i / 8] & (0x80 >> (i % 8))) {
			char net[INET6_ADDRSTRLEN];
			__u8 fixed[16];

			memcpy(fixed, addr, 16);
			for (; i < max; i++)
				fixed[i / 8] &= ~(0x80 >> (i % 8));
			return cli_err("prefix '%s' has host bits set; did you mean %s/%u?",
				       s,
				       fmt_addr(*family, fixed, net, sizeof(net)),
				       *plen);
		}
	}
	return 0;
}

int parse_mac(const char *s, __u8 mac[6])
{
	unsigned int b[6];
	char end;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &end) != 6 ||
	    strlen(s) != 17)
		return cli_err("invalid MAC address '%s': expected xx:xx:xx:xx:xx:xx",
			       s);
	for (i = 0; i < 6; i++)
		mac[i] = b[i];
	return 0;
}

int parse_port_range(const char *s, __u16 *lo, __u16 *hi)
{
	char buf[32], *dash;
	unsigned long a, b;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return cli_err("invalid port '%s'", s);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (parse_ulong(buf, 65535, &a) ||
	    (dash && parse_ulong(dash + 1, 65535, &b)))
		return cli_err("invalid port or range '%s': ports are 0..65535, "
			       "a range is LO-HI",
			       s);
	if (!dash)
		b = a;
	if (a > b)
		return cli_err("invalid port range '%s': %lu is above %lu; write it "
			       "as %lu-%lu",
			       s, a, b, b, a);
	*lo = a;
	*hi = b;
	return 0;
}

int parse_proto(const char *s, __u8 *proto)
{
	static const struct {
		const char *name;
		__u8 num;
	} names[] = {
		{ "tcp", 6 },	  { "udp", 17 },       { "icmp", 1 },
		{ "icmpv6", 58 }, { "ipv6-icmp", 58 }, { "sctp", 132 },
		{ "gre", 47 },	  { "esp", 50 },       { "ah", 51 },
		{ "ospf", 89 },
	};
	struct protoent *pe;
	unsigned long n;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcasecmp(s, names[i].name)) {
			*proto = names[i].num;
			return 0;
		}
	}
	if (!parse_ulong(s, 255, &n)) {
		*proto = n;
		return 0;
	}
	pe = getprotobyname(s);
	if (pe) {
		*proto = pe->p_proto;
		return 0;
	}
	return cli_err("unknown protocol '%s': use tcp, udp, icmp, icmpv6, sctp "
		       "or a number 0..255",
		       s);
}

int parse_action(const char *s, const char *allowed, __u32 *act)
{
	static const char *const names[] = { "pass", "drop", "flood" };
	__u32 i;

	for (i = 0; i < 3; i++) {
		if (!strcmp(s, names[i]) && strstr(allowed, names[i])) {
			*act = i;
			return 0;
		}
	}
	return cli_err("invalid action '%s': expected one of %s", s, allowed);
}

int cli_dev_check(const char *dev)
{
	char err[256];

	return xnf_dev_name_check(dev, err, sizeof(err)) ? cli_err("%s", err) : 0;
}

int cli_ifindex(const char *dev, __u32 *ifindex)
{
	char err[256];

	return xnf_dev_ifindex(dev, ifindex, err, sizeof(err)) ?
		       cli_err("%s", err) :
		       0;
}

int cli_ifmac(const char *dev, __u8 mac[6])
{
	struct ifreq ifr = {};
	int s, err = 0;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return cli_err("socket: %s", strerror(errno));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(s, SIOCGIFHWADDR, &ifr))
		err = cli_err("cannot read the MAC address of %s: %s", dev,
			      strerror(errno));
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(s);
	return err;
}

const char *fmt_addr(int family, const __u8 *addr, char *buf, size_t len)
{
	inet_ntop(family == XNF_AF_INET ? AF_INET : AF_INET6, addr, buf, len);
	return buf;
}

const char *fmt_prefix(int family, const __u8 *addr, __u32 plen, char *buf,
		       size_t len)
{
	char a[INET6_ADDRSTRLEN];

	snprintf(buf, len, "%s/%u", fmt_addr(family, addr, a, sizeof(a)), plen);
	return buf;
}

const char *fmt_mac(const __u8 *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
	return buf;
}

const char *fmt_proto(__u8 proto, char *buf, size_t len)
{
	struct protoent *pe = getprotobynumber(proto);

	if (proto == 58)
		snprintf(buf, len, "icmpv6");
	else if (pe)
		snprintf(buf, len, "%s", pe->p_name);
	else
		snprintf(buf, len, "%u", proto);
	return buf;
}

const char *fmt_ifname(__u32 ifindex, char *buf)
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

const char *fmt_ifword(__u32 ifindex, char *buf)
{
	char name[IF_NAMESIZE];

	return cli_word(fmt_ifname(ifindex, name), buf, CLI_DEV_WORD);
}

const char *fmt_action(__u32 act)
{
	return act == XNF_ACT_DROP  ? "drop" :
	       act == XNF_ACT_FLOOD ? "flood" :
				      "pass";
}

int cli_dev_path(char *buf, const char *dev, const char *name)
{
	return xnf_dev_path(cli.root, dev, name, buf, PATH_MAX);
}

int cli_keyword(const char *arg, const char *const *kws, const char *what,
		const char *help)
{
	int i, found = -1;

	for (i = 0; kws[i]; i++) {
		if (!strcmp(arg, kws[i]))
			return i;
		if (!is_prefix(arg, kws[i]))
			continue;
		if (found >= 0)
			return cli_err("'%s' is ambiguous: %s or %s? %s", arg,
				       kws[found], kws[i], help);
		found = i;
	}
	if (found < 0)
		return cli_err("unknown %s argument '%s'; %s", what, arg, help);
	return found;
}

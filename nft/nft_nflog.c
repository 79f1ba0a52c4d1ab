/*
 * nft_nflog: the TCP SYNs the ruleset refuses, as nfnetlink_log delivers
 * them (the "log group" rule in chain filter_pre, NFT_LOG_GROUP): a
 * netlink socket bound to the group on the loop, and the parser of what it
 * reads (pure, over a bounded buffer).
 *
 * Only the packet's first NFT_NFLOG_COPY bytes are copied to us: the IPv4
 * header (with options, at most 60 bytes) and the TCP ports. The kernel
 * queues at most a socket buffer of them; when the daemon is behind, the
 * rest are dropped (ENOBUFS, counted), never waited for.
 */
#include <sys/socket.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <event2/event.h>
#include <libmnl/libmnl.h>

#include "gatekeeper/base/gk_log.h"
#include "nft/nft_int.h"

#define NFT_NFLOG_COPY		80
#define NFT_NFLOG_RCVBUF	(1024 * 1024)
#define NFT_NFLOG_READS		64	/* datagrams per wakeup */

struct nft_nflog {
	struct mnl_socket	*nl;
	struct event		*ev;
	nft_refusal_cb		 cb;
	void			*arg;
	uint64_t		 lost;		/* ENOBUFS seen */
};

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint16_t
rd16h(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static uint32_t
rd32h(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The IPv4 header and TCP ports of a logged packet; false if it is not
 * an IPv4 TCP segment whose ports were copied. */
static bool
parse_ip(const uint8_t *p, size_t len, struct nft_refusal *r)
{
	size_t ihl;

	if (len < 20 || p[0] >> 4 != 4)
		return false;
	ihl = (size_t)(p[0] & 0x0f) * 4;
	if (ihl < 20 || len < ihl + 4 || p[9] != IPPROTO_TCP)
		return false;
	/* a fragment other than the first carries no ports */
	if ((rd16(p + 6) & 0x1fff) != 0)
		return false;
	memcpy(&r->src.s_addr, p + 12, 4);
	memcpy(&r->dst.s_addr, p + 16, 4);
	r->sport = rd16(p + ihl);
	r->dport = rd16(p + ihl + 2);
	return true;
}

/* One NFULNL_MSG_PACKET's attributes (after the nfgenmsg). */
static bool
parse_packet(const uint8_t *p, size_t len, struct nft_refusal *r)
{
	size_t alen, off = 0;
	uint16_t type;
	bool have = false;

	memset(r, 0, sizeof(*r));
	while (len - off >= 4) {
		alen = rd16h(p + off);
		type = rd16h(p + off + 2) & NLA_TYPE_MASK;
		if (alen < 4 || alen > len - off)
			return false;
		if (type == NFULA_IFINDEX_INDEV && alen >= 8)
			r->ifindex = ntohl(rd32h(p + off + 4));
		else if (type == NFULA_PAYLOAD)
			have = parse_ip(p + off + 4, alen - 4, r);
		off += (alen + 3) & ~(size_t)3;
		if (off > len)
			break;
	}
	return have;
}

size_t
nft_nflog_parse(const uint8_t *buf, size_t len, nft_refusal_cb cb,
    void *arg)
{
	struct nft_refusal r;
	size_t off = 0, n = 0, mlen;
	uint16_t type;

	while (len - off >= 16) {
		mlen = rd32h(buf + off);		/* nlmsg_len */
		type = rd16h(buf + off + 4);
		if (mlen < 16 || mlen > len - off)
			break;
		if (type == (NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET) &&
		    mlen >= 16 + 4 &&
		    parse_packet(buf + off + 20, mlen - 20, &r)) {
			cb(arg, &r);
			n++;
		}
		off += (mlen + 3) & ~(size_t)3;
		if (off > len)
			break;
	}
	return n;
}

/* One config request for group (command cmd, or with mode the copy
 * mode), acknowledged. 0, or -1 with errno. */
static int
config(struct mnl_socket *nl, uint16_t group, uint8_t cmd, bool mode,
    uint32_t seq)
{
	char buf[8192];
	struct nlmsghdr *nlh;
	struct nfgenmsg *g;
	struct nfulnl_msg_config_cmd c = { cmd };
	struct nfulnl_msg_config_mode m = { htonl(NFT_NFLOG_COPY),
	    NFULNL_COPY_PACKET, 0 };
	ssize_t n;
	int rc;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons(group);
	if (mode)
		mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof(m), &m);
	else
		mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof(c), &c);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) == -1)
		return -1;
	/* the socket is still blocking here, with a receive timeout */
	if ((n = mnl_socket_recvfrom(nl, buf, sizeof(buf))) == -1)
		return -1;
	rc = mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(nl), NULL,
	    NULL);
	return rc == -1 ? -1 : 0;
}

static void
read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct nft_nflog *l = arg;
	uint8_t buf[16384];
	ssize_t n;
	int i;

	(void)what;
	for (i = 0; i < NFT_NFLOG_READS; i++) {
		if ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) == -1) {
			if (errno == ENOBUFS) {
				/* the kernel dropped some: go on reading */
				if (l->lost++ == 0)
					log_warnx("nft: refusals came faster "
					    "than they could be read; some "
					    "are not reported");
				continue;
			}
			if (errno != EAGAIN && errno != EINTR)
				log_warn("nft: reading refusals");
			return;
		}
		nft_nflog_parse(buf, (size_t)n, l->cb, l->arg);
	}
}

struct nft_nflog *
nft_nflog_open(struct event_base *base, nft_refusal_cb cb, void *arg,
    char *err, size_t errlen)
{
	struct timeval tv = { 2, 0 };
	struct nft_nflog *l;
	int rcv = NFT_NFLOG_RCVBUF;
	uint32_t seq = 1;

	if ((l = calloc(1, sizeof(*l))) == NULL) {
		gk_seterr(err, errlen, "out of memory");
		return NULL;
	}
	l->cb = cb;
	l->arg = arg;
	if ((l->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC)) ==
	    NULL || mnl_socket_bind(l->nl, 0, MNL_SOCKET_AUTOPID) == -1) {
		gk_seterr(err, errlen, "nflog: netlink socket: %s",
		    strerror(errno));
		goto fail;
	}
	(void)setsockopt(mnl_socket_get_fd(l->nl), SOL_SOCKET, SO_RCVTIMEO,
	    &tv, sizeof(tv));
	if (setsockopt(mnl_socket_get_fd(l->nl), SOL_SOCKET, SO_RCVBUFFORCE,
	    &rcv, sizeof(rcv)) == -1)
		(void)setsockopt(mnl_socket_get_fd(l->nl), SOL_SOCKET,
		    SO_RCVBUF, &rcv, sizeof(rcv));
	if (config(l->nl, NFT_LOG_GROUP, NFULNL_CFG_CMD_BIND, false,
	    seq++) == -1) {
		gk_seterr(err, errlen, "nflog: binding group %u: %s%s",
		    NFT_LOG_GROUP, strerror(errno), errno == EBUSY ?
		    " (another program, or another gatekeeperd in this "
		    "network namespace, has it)" : "");
		goto fail;
	}
	if (config(l->nl, NFT_LOG_GROUP, 0, true, seq++) == -1) {
		gk_seterr(err, errlen, "nflog: copy mode for group %u: %s",
		    NFT_LOG_GROUP, strerror(errno));
		goto fail;
	}
	if ((l->ev = event_new(base, mnl_socket_get_fd(l->nl),
	    EV_READ | EV_PERSIST, read_cb, l)) == NULL ||
	    event_add(l->ev, NULL) == -1) {
		gk_seterr(err, errlen, "nflog: cannot add the read event");
		goto fail;
	}
	return l;
fail:
	nft_nflog_close(l);
	return NULL;
}

void
nft_nflog_close(struct nft_nflog *l)
{
	if (l == NULL)
		return;
	if (l->ev != NULL)
		event_free(l->ev);
	if (l->nl != NULL)
		mnl_socket_close(l->nl);	/* unbinds the group */
	free(l);
}

uint64_t
nft_nflog_lost(const struct nft_nflog *l)
{
	return l == NULL ? 0 : l->lost;
}

/*
 * nft_mnl: talk to nf_tables over NETLINK_NETFILTER with libmnl.
 *
 * Every message in a batch carries NLM_F_ACK, so the kernel answers each
 * one (error 0 or an errno); we wait, bounded, until every message is
 * accounted for. A failure of the whole batch (commit, out of memory) comes
 * back as one error for the batch-begin message.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libmnl/libmnl.h>
#include <libnftnl/batch.h>
#include <libnftnl/set.h>

#include "gatekeeper/base/gk_time.h"
#include "nft/nft_int.h"

#define NFT_MNL_TIMEOUT_MS	5000
#define NFT_MNL_MAXIOV		64
#define NFT_MNL_RCVBUF		32768	/* MNL_SOCKET_DUMP_SIZE */
#define NFT_MNL_SMALLBUF	1024

struct acks {
	uint32_t	 begin_seq;	/* seq of the batch-begin message */
	uint32_t	 first_seq;	/* messages: first_seq .. +expected */
	uint32_t	 expected;
	uint32_t	 got;
	int		 error;		/* first errno reported, 0 if none */
	uint16_t	 failed_type;	/* its message type */
	uint32_t	 failed_index;	/* its position, 1-based */
	bool		 batch_failed;	/* error for the whole batch */
};

int
nft_mnl_open(struct nft_mnl *m, char *err, size_t errlen)
{
	int one = 1;

	memset(m, 0, sizeof(*m));
	m->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (m->nl == NULL) {
		gk_seterr(err, errlen, "nftables: netlink socket: %s",
		    strerror(errno));
		return -1;
	}
	if (mnl_socket_bind(m->nl, 0, MNL_SOCKET_AUTOPID) == -1) {
		gk_seterr(err, errlen, "nftables: netlink bind: %s",
		    strerror(errno));
		mnl_socket_close(m->nl);
		m->nl = NULL;
		return -1;
	}
	/* Acks without the echoed request: they stay small. */
	(void)mnl_socket_setsockopt(m->nl, NETLINK_CAP_ACK, &one,
	    sizeof(one));
	m->portid = mnl_socket_get_portid(m->nl);
	m->seq = (uint32_t)time(NULL);
	return 0;
}

void
nft_mnl_close(struct nft_mnl *m)
{
	if (m->nl != NULL)
		mnl_socket_close(m->nl);
	m->nl = NULL;
}

static const char *
msg_what(uint16_t type)
{
	switch (type & 0xff) {
	case NFT_MSG_NEWTABLE:
		return "creating table inet " NFT_TABLE;
	case NFT_MSG_DELTABLE:
		return "deleting table inet " NFT_TABLE;
	case NFT_MSG_NEWSET:
		return "creating a set (" NFT_SET " or " NFT_SET_TP ")";
	case NFT_MSG_NEWCHAIN:
		return "creating a chain";
	case NFT_MSG_NEWRULE:
		return "adding a rule";
	case NFT_MSG_NEWSETELEM:
		return "adding a cage to set " NFT_SET " or " NFT_SET_TP;
	case NFT_MSG_DELSETELEM:
		return "deleting a cage from set " NFT_SET " or " NFT_SET_TP;
	case NFNL_MSG_BATCH_BEGIN:
		return "committing the transaction";
	default:
		return "a request";
	}
}

/* A hint for error e on a message of type `type` (0: not a batch's). */
static const char *
errno_hint(int e, uint16_t type)
{
	/* Deleting an element that is not there: nothing is missing. */
	if (e == ENOENT && (type & 0xff) == NFT_MSG_DELSETELEM &&
	    type >> 8 == NFNL_SUBSYS_NFTABLES)
		return " (not in the set)";
	switch (e) {
	case EPERM:
		return " (gatekeeperd needs CAP_NET_ADMIN)";
	case EOPNOTSUPP:
	case ENOENT:
		return " (is nf_tables with nat, reject and conntrack "
		    "support available in this kernel?)";
	default:
		return "";
	}
}

/* Count the messages that want an ACK; note the batch-begin seq. */
static void
acks_expect(struct acks *a, const struct iovec *iov, int n)
{
	const struct nlmsghdr *nlh;
	int i, len;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < n; i++) {
		nlh = iov[i].iov_base;
		len = (int)iov[i].iov_len;
		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN) {
				a->begin_seq = nlh->nlmsg_seq;
				continue;
			}
			if (!(nlh->nlmsg_flags & NLM_F_ACK))
				continue;
			if (a->expected++ == 0)
				a->first_seq = nlh->nlmsg_seq;
		}
	}
}

static void
acks_take(struct acks *a, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e;

	if (nlh->nlmsg_type != NLMSG_ERROR ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
		return;
	e = mnl_nlmsg_get_payload(nlh);
	if (e->msg.nlmsg_seq == a->begin_seq && e->error != 0) {
		a->batch_failed = true;
		a->error = -e->error;
		a->failed_type = NFNL_MSG_BATCH_BEGIN;
		return;
	}
	if (e->msg.nlmsg_seq - a->first_seq >= a->expected)
		return;			/* not ours (a stale reply) */
	a->got++;
	if (e->error != 0 && a->error == 0) {
		a->error = -e->error;
		a->failed_type = e->msg.nlmsg_type;
		a->failed_index = e->msg.nlmsg_seq - a->first_seq + 1;
	}
}

/*
 * Receive until done(arg) says so or the deadline passes. Each datagram
 * goes to take(). 0, or -1 with errno (ETIMEDOUT or recv's).
 */
static int
recv_until(struct nft_mnl *m, bool (*done)(void *), void (*take)(void *,
    const struct nlmsghdr *), void *arg)
{
	char buf[NFT_MNL_RCVBUF];
	struct pollfd pfd = { .fd = mnl_socket_get_fd(m->nl), .events = POLLIN };
	uint64_t deadline = gk_clock_ms() + NFT_MNL_TIMEOUT_MS;
	const struct nlmsghdr *nlh;
	ssize_t n;
	int len, left;

	while (!done(arg)) {
		if ((left = gk_ms_left(deadline, NFT_MNL_TIMEOUT_MS)) <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (poll(&pfd, 1, (int)left) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (!(pfd.revents & POLLIN))
			continue;
		n = recv(pfd.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		len = (int)n;
		nlh = (const struct nlmsghdr *)buf;
		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len))
			take(arg, nlh);
	}
	return 0;
}

static bool
acks_done(void *arg)
{
	struct acks *a = arg;

	return a->batch_failed || a->got >= a->expected;
}

static void
acks_take_cb(void *arg, const struct nlmsghdr *nlh)
{
	acks_take(arg, nlh);
}

int
nft_mnl_batch(struct nft_mnl *m, struct nftnl_batch *b, char *err,
    size_t errlen)
{
	struct iovec iov[NFT_MNL_MAXIOV];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct msghdr msg = { .msg_name = &sa, .msg_namelen = sizeof(sa),
	    .msg_iov = iov };
	struct acks a;
	int n;

	if ((n = nftnl_batch_iovec_len(b)) > NFT_MNL_MAXIOV) {
		gk_seterr(err, errlen, "nftables: batch too large (%d pages)",
		    n);
		errno = EMSGSIZE;
		return -1;
	}
	nftnl_batch_iovec(b, iov, (uint32_t)n);
	msg.msg_iovlen = (size_t)n;
	acks_expect(&a, iov, n);
	if (sendmsg(mnl_socket_get_fd(m->nl), &msg, 0) == -1) {
		gk_seterr(err, errlen, "nftables: sending the batch: %s",
		    strerror(errno));
		return -1;
	}
	if (recv_until(m, acks_done, acks_take_cb, &a) == -1) {
		gk_seterr(err, errlen, "nftables: waiting for the kernel's "
		    "answer (%u of %u acknowledged): %s", a.got, a.expected,
		    strerror(errno));
		return -1;
	}
	if (a.error != 0) {
		if (a.failed_index != 0)
			gk_seterr(err, errlen, "nftables: %s (message %u of "
			    "%u) failed: %s%s", msg_what(a.failed_type),
			    a.failed_index, a.expected, strerror(a.error),
			    errno_hint(a.error, a.failed_type));
		else
			gk_seterr(err, errlen, "nftables: %s failed: %s%s",
			    msg_what(a.failed_type), strerror(a.error),
			    errno_hint(a.error, a.failed_type));
		errno = a.error;
		return -1;
	}
	return 0;
}

/*
 * One GET request's answer: messages of type `type` (what was asked
 * for) go to `obj`, then the ACK ends it with its error (0, ENOENT...).
 */
struct get_query {
	uint32_t	 seq;
	uint16_t	 type;		/* NFT_MSG_NEW... */
	void		(*obj)(void *arg, const struct nlmsghdr *nlh);
	void		*arg;
	bool		 done;
	int		 error;
};

static bool
get_done(void *arg)
{
	return ((struct get_query *)arg)->done;
}

static void
get_take(void *arg, const struct nlmsghdr *nlh)
{
	struct get_query *q = arg;
	const struct nlmsgerr *e;

	if (nlh->nlmsg_seq != q->seq)
		return;
	if ((nlh->nlmsg_type & 0xff) == q->type &&
	    nlh->nlmsg_type >> 8 == NFNL_SUBSYS_NFTABLES) {
		q->obj(q->arg, nlh);
		return;
	}
	if (nlh->nlmsg_type != NLMSG_ERROR ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
		return;
	e = mnl_nlmsg_get_payload(nlh);
	q->error = -e->error;
	q->done = true;
}

/* Send the request in buf (seq q->seq) and read until its ACK. 0, or -1
 * with errno (then nothing is known). */
static int
get_run(struct nft_mnl *m, char *buf, struct get_query *q)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;

	if (mnl_socket_sendto(m->nl, nlh, nlh->nlmsg_len) == -1)
		return -1;
	return recv_until(m, get_done, get_take, q);
}

static void
table_seen(void *arg, const struct nlmsghdr *nlh)
{
	(void)nlh;
	*(bool *)arg = true;
}

int
nft_mnl_table_exists(struct nft_mnl *m, char *err, size_t errlen)
{
	char buf[NFT_MNL_SMALLBUF];
	bool exists = false;
	struct get_query q = { .seq = m->seq++, .type = NFT_MSG_NEWTABLE,
	    .obj = table_seen, .arg = &exists };

	nft_msg_gettable(buf, q.seq);
	if (get_run(m, buf, &q) == -1) {
		gk_seterr(err, errlen,
		    "nftables: waiting for table inet %s: %s", NFT_TABLE,
		    strerror(errno));
		return -1;
	}
	if (q.error == ENOENT)
		return 0;
	if (q.error != 0) {
		gk_seterr(err, errlen, "nftables: asking for table inet %s: "
		    "%s%s", NFT_TABLE, strerror(q.error),
		    errno_hint(q.error, 0));
		errno = q.error;
		return -1;
	}
	return exists ? 1 : 0;
}

struct getpin {
	bool		 found;
	uint64_t	 expires_ms;
};

static void
pin_seen(void *arg, const struct nlmsghdr *nlh)
{
	struct getpin *g = arg;
	struct nftnl_set *s;
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *el;

	if ((s = nftnl_set_alloc()) == NULL)
		return;
	if (nftnl_set_elems_nlmsg_parse(nlh, s) == 0 &&
	    (it = nftnl_set_elems_iter_create(s)) != NULL) {
		if ((el = nftnl_set_elems_iter_next(it)) != NULL) {
			g->found = true;
			if (nftnl_set_elem_is_set(el, NFTNL_SET_ELEM_EXPIRATION))
				g->expires_ms = nftnl_set_elem_get_u64(el,
				    NFTNL_SET_ELEM_EXPIRATION);
		}
		nftnl_set_elems_iter_destroy(it);
	}
	nftnl_set_free(s);
}

int
nft_mnl_pin_expires(struct nft_mnl *m, uint32_t ifindex, struct in_addr a,
    uint64_t *ms, char *err, size_t errlen)
{
	char buf[NFT_MNL_SMALLBUF];
	struct getpin g = { false, 0 };
	struct get_query q = { .seq = m->seq++, .type = NFT_MSG_NEWSETELEM,
	    .obj = pin_seen, .arg = &g };

	if (nft_msg_getpin(buf, ifindex, a, q.seq) == -1) {
		gk_seterr(err, errlen, "nftables: out of memory");
		return -1;
	}
	if (get_run(m, buf, &q) == -1) {
		gk_seterr(err, errlen, "nftables: reading an element of set "
		    "%s: %s", NFT_SET_PINS, strerror(errno));
		return -1;
	}
	if (q.error != 0 || !g.found) {
		gk_seterr(err, errlen, "nftables: reading an element of set "
		    "%s: %s", NFT_SET_PINS, strerror(q.error != 0 ? q.error :
		    ENOENT));
		errno = q.error != 0 ? q.error : ENOENT;
		return -1;
	}
	*ms = g.expires_ms;
	return 0;
}

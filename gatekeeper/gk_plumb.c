/*
 * gk_plumb: gatekeeperd's glue between the control socket and the kernel
 * plumbing (nft/). A cage created with a network namespace gets an
 * address from --cage-subnet, a veth pair named after that address
 * (gk-<8 hex digits>) and its element in the anti-spoofing set; closing
 * the control connection undoes it in the background.
 *
 * A transparent cage's pins are copied to the kernel (set pins, through
 * the cage table's sync hook) so that its TCP to any other address is
 * refused at the SYN; the refusals come back from the log group and are
 * recorded as the transparent listener's denials.
 */
#include <sys/stat.h>

#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gatekeeper/base/gk_log.h"
#include "gatekeeper/base/gk_time.h"
#include "gatekeeper/gk_plumb.h"
#include "gatekeeper/policy/gk_special.h"
#include "gatekeeper/cage/gk_ask.h"
#include "gatekeeper/cage/gk_cage.h"
#include "gatekeeper/state/gk_conf.h"
#include "gatekeeper/cage/gk_plumb_facet.h"
#include "nft/nft.h"
#include "socks/proxy.h"

/* A plumbed cage's namespace, to know a control peer inside it. */
struct cage_ns {
	struct in_addr	 addr;
	dev_t		 dev;
	ino_t		 ino;
};

struct gk_plumb {
	struct nft_plumb	*np;
	struct gk_addr		 net;
	uint8_t			 prefix;
	struct cage_ns		*ns;		/* one per live cage */
	size_t			 ncages;
	size_t			 nscap;
	bool			 tp;		/* a transparent port */
	struct gk_cage_table	*cages;		/* gk_plumb_attach's */
	const struct proxy_ctx	*proxy;
	struct nft_nflog	*log;
	uint64_t		 pin_fail_ms;	/* last logged */
};

static int
ns_add(struct gk_plumb *p, struct in_addr a, int nsfd)
{
	struct cage_ns *n;
	struct stat st;
	size_t cap;

	if (fstat(nsfd, &st) == -1)
		return -1;
	if (p->ncages == p->nscap) {
		cap = p->nscap == 0 ? 16 : p->nscap * 2;
		if ((n = reallocarray(p->ns, cap, sizeof(*n))) == NULL)
			return -1;
		p->ns = n;
		p->nscap = cap;
	}
	p->ns[p->ncages].addr = a;
	p->ns[p->ncages].dev = st.st_dev;
	p->ns[p->ncages].ino = st.st_ino;
	p->ncages++;
	return 0;
}

static void
ns_del(struct gk_plumb *p, struct in_addr a)
{
	size_t i;

	for (i = 0; i < p->ncages; i++) {
		if (p->ns[i].addr.s_addr == a.s_addr) {
			p->ns[i] = p->ns[--p->ncages];
			return;
		}
	}
}

/* The host link of a cage: "gk-" and its address in hex, 11 bytes. */
static void
link_name(struct in_addr a, char name[NFT_IFNAMSIZ])
{
	snprintf(name, NFT_IFNAMSIZ, "%s%08x", NFT_IFNAME_PREFIX,
	    (unsigned)ntohl(a.s_addr));
}

static int
plumb_up(void *arg, int nsfd, uid_t uid, bool transparent, bool open,
    struct gk_addr *addr, uint32_t *link, char *err, size_t errlen)
{
	struct gk_plumb *p = arg;
	char name[NFT_IFNAMSIZ], net[GK_ADDR_STRLEN];
	struct in_addr a;
	uint32_t ifindex;

	if (nft_netns_check(nsfd, uid, err, errlen) == -1)
		return -1;
	if (nft_addr_alloc(p->np, &a) == -1) {
		snprintf(err, errlen, "no free cage address left in %s/%u "
		    "(%zu cages live, %zu being torn down); wait for cages to "
		    "end or give gatekeeperd a larger --cage-subnet",
		    gk_addr_ntop(&p->net, net, sizeof(net)), p->prefix,
		    p->ncages, nft_plumb_pending(p->np));
		return -1;
	}
	link_name(a, name);
	if (nft_cage_up(p->np, nsfd, name, a, transparent, open, &ifindex,
	    err, errlen) == -1)
		return -1;
	if (ns_add(p, a, nsfd) == -1) {
		snprintf(err, errlen, "cannot record the cage's namespace: %s",
		    strerror(errno));
		nft_cage_down(p->np, name, a);
		return -1;
	}
	memset(addr, 0, sizeof(*addr));
	addr->family = AF_INET;
	memcpy(addr->bytes, &a.s_addr, 4);
	*link = transparent && p->tp ? ifindex : 0;
	return 0;
}

static void
plumb_open(void *arg, const struct gk_addr *addr)
{
	struct gk_plumb *p = arg;
	char name[NFT_IFNAMSIZ], err[256];
	struct in_addr a;

	memcpy(&a.s_addr, addr->bytes, 4);
	link_name(a, name);
	if (nft_cage_open(p->np, name, a, err, sizeof(err)) == -1)
		log_warnx("cage %s: %s; its TCP to addresses its CIDR "
		    "patterns allow is refused at the SYN", name, err);
}

/*
 * The cage table's sync hook: the kernel lets the cage's TCP to `a`
 * through to the transparent listener until `until` (0: no more, the
 * cage ends). Special addresses
 * are never added: the listener would refuse them anyway, so they are
 * refused (and reported) at the SYN. An asking cage's placeholders are
 * the exception: the listener holds such a connection on its name.
 */
static int
plumb_pin_sync(void *arg, const struct gk_cage *c, const struct gk_addr *a,
    time_t until)
{
	struct gk_plumb *p = arg;
	char err[256], txt[GK_ADDR_STRLEN];
	struct in_addr dst;
	time_t now = gk_now();
	uint64_t ms;

	if (a->family != AF_INET || (until != 0 && until <= now) ||
	    (gk_special_classify(a, p->proxy->host) != GK_SPECIAL_NONE &&
	    gk_ask_placeholder_name(c, a) == NULL))
		return 0;
	memcpy(&dst.s_addr, a->bytes, 4);
	if (until == 0) {	/* the cage ends: out of the kernel's copy */
		if (nft_cage_unpin(p->np, gk_cage_plumb_link(c), dst, err,
		    sizeof(err)) == 0)
			return 0;
	} else if (nft_cage_pin(p->np, gk_cage_plumb_link(c), dst,
	    (uint32_t)(until - now), err, sizeof(err)) == 0)
		return 0;
	/* once a second at most: a failing kernel would flood the log */
	if ((ms = gk_clock_ms()) - p->pin_fail_ms >= 1000) {
		p->pin_fail_ms = ms;
		log_warnx("cage=%s address=%s: %s; its connections there are "
		    "refused until a later lookup succeeds", gk_cage_id(c),
		    gk_addr_ntop(a, txt, sizeof(txt)), err);
	}
	return -1;
}

/* A refused SYN, from the log group: a denial of the cage it came from. */
static void
plumb_refused(void *arg, const struct nft_refusal *r)
{
	struct gk_plumb *p = arg;
	struct gk_addr src, dst;
	struct gk_cage *c;

	gk_addr_from_bytes(&src, AF_INET, (const uint8_t *)&r->src.s_addr);
	gk_addr_from_bytes(&dst, AF_INET, (const uint8_t *)&r->dst.s_addr);
	/* the link tells a live cage from one that used the address before */
	if ((c = gk_cage_by_source(p->cages, &src)) == NULL ||
	    gk_cage_plumb_link(c) == 0 ||
	    gk_cage_plumb_link(c) != (uint32_t)r->ifindex)
		return;
	proxy_transparent_refused(p->proxy, c, &dst, r->dport);
}

static void
plumb_down(void *arg, const struct gk_addr *addr)
{
	struct gk_plumb *p = arg;
	char name[NFT_IFNAMSIZ];
	struct in_addr a;

	memcpy(&a.s_addr, addr->bytes, 4);
	link_name(a, name);
	ns_del(p, a);
	nft_cage_down(p->np, name, a);
}

/* Whether a process in network namespace `netns` lives in a cage. */
static bool
plumb_peer_in_cage(void *arg, const struct gk_ns_id *netns)
{
	struct gk_plumb *p = arg;
	size_t i;

	for (i = 0; i < p->ncages; i++) {
		if (p->ns[i].dev == netns->dev && p->ns[i].ino == netns->ino)
			return true;
	}
	return false;
}

static bool
plumb_owns(void *arg, const struct gk_addr *addr)
{
	struct gk_plumb *p = arg;

	return gk_addr_in_prefix(addr, &p->net, p->prefix);
}

/* Whether plumbing is to run: 1; 0 when off (with *why); -1 when
 * --plumbing on cannot be honoured. */
static int
plumbing_wanted(const struct gk_conf *c, const char **why)
{
	bool inside = c->listen.family == AF_INET &&
	    gk_addr_in_prefix(&c->listen, &c->cage_net, c->cage_prefix);

	*why = NULL;
	if (c->plumbing == GK_PLUMB_OFF) {
		*why = "--plumbing off";
		return 0;
	}
	if (inside)
		return 1;
	*why = "--listen is not an IPv4 address inside --cage-subnet";
	return c->plumbing == GK_PLUMB_ON ? -1 : 0;
}

void
gk_plumb_hooks(struct gk_plumb *p, const struct gk_conf *c,
    struct gk_cage_plumbing *h)
{
	char gw[GK_ADDR_STRLEN];

	memset(h, 0, sizeof(*h));
	h->arg = p;
	h->up = plumb_up;
	h->down = plumb_down;
	h->open = plumb_open;
	h->owns = plumb_owns;
	h->peer_in_cage = plumb_peer_in_cage;
	gk_addr_ntop(&c->listen, gw, sizeof(gw));
	snprintf(h->gateway, sizeof(h->gateway), "%s", gw);
	snprintf(h->dns, sizeof(h->dns), "%s:%u", gw, c->dns_port);
	snprintf(h->socks, sizeof(h->socks), "%s:%u", gw, c->socks_port);
	snprintf(h->http, sizeof(h->http), "%s:%u", gw, c->http_port);
	if (c->transparent_port != 0)
		snprintf(h->transparent, sizeof(h->transparent), "%s:%u", gw,
		    c->transparent_port);
}

int
gk_plumb_start(struct gk_plumb **out, struct event_base *base,
    const struct gk_conf *c, char *err, size_t errlen)
{
	char net[GK_ADDR_STRLEN], listen[GK_ADDR_STRLEN];
	struct nft_conf nc;
	struct gk_plumb *p;
	const char *why;
	int want;

	*out = NULL;
	gk_addr_ntop(&c->cage_net, net, sizeof(net));
	gk_addr_ntop(&c->listen, listen, sizeof(listen));
	if ((want = plumbing_wanted(c, &why)) == -1) {
		snprintf(err, errlen, "--plumbing on: --listen %s is not an "
		    "IPv4 address inside --cage-subnet %s/%u; the listen "
		    "address is the cages' gateway", listen, net,
		    c->cage_prefix);
		return -1;
	}
	if (want == 0) {
		log_info("kernel plumbing off (%s): cages are named by source "
		    "address or token only", why);
		return 0;
	}
	memset(&nc, 0, sizeof(nc));
	memcpy(&nc.gateway.s_addr, c->listen.bytes, 4);
	memcpy(&nc.subnet.s_addr, c->cage_net.bytes, 4);
	nc.prefix = c->cage_prefix;
	nc.dns_port = c->dns_port;
	nc.socks_port = c->socks_port;
	nc.http_port = c->http_port;
	nc.transparent_port = c->transparent_port;
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->net = c->cage_net;
	p->prefix = c->cage_prefix;
	p->tp = c->transparent_port != 0;
	if ((p->np = nft_plumb_new(base, &nc, err, errlen)) == NULL) {
		free(p);
		return -1;
	}
	log_info("kernel plumbing on: gateway %s, cages from %s/%u, nftables "
	    "table inet gatekeeper", listen, net, c->cage_prefix);
	*out = p;
	return 0;
}

void
gk_plumb_attach(struct gk_plumb *p, struct gk_cage_table *cages,
    const struct proxy_ctx *ctx)
{
	char err[256];

	p->cages = cages;
	p->proxy = ctx;
	if (!p->tp)
		return;
	gk_cage_table_pin_sync(cages, plumb_pin_sync, p);
	if ((p->log = nft_nflog_open(ctx->base, plumb_refused, p, err,
	    sizeof(err))) == NULL)
		log_warnx("%s: connections the kernel refuses are not "
		    "reported to the cages' owners", err);
}

void
gk_plumb_stop(struct gk_plumb *p)
{
	if (p == NULL)
		return;
	if (p->cages != NULL)
		gk_cage_table_pin_sync(p->cages, NULL, NULL);
	nft_nflog_close(p->log);
	nft_plumb_free(p->np);
	free(p->ns);
	free(p);
}

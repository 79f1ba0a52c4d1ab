/*
 * nft_link: links, addresses, routes and sysctls with libnl-route-3.
 *
 * Each call is one or a few rtnetlink requests, each waiting for the
 * kernel's ACK (libnl's *_add/_change/_delete do). A socket works in the
 * netns it was connected in, whichever netns the calling thread is in
 * later: nft_netns_run connects the cage's socket inside the cage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>

#include "nft/nft_int.h"

#define NFT_LINK_TIMEOUT_S	5

bool
nft_ifname_valid(const char *ifname)
{
	size_t n = strlen(NFT_IFNAME_PREFIX), i;

	if (strncmp(ifname, NFT_IFNAME_PREFIX, n) != 0)
		return false;
	for (i = n; ifname[i] != '\0'; i++) {
		/* '.' and '/' would change the sysctl path; keep it simple. */
		if (!((ifname[i] >= 'a' && ifname[i] <= 'z') ||
		    (ifname[i] >= 'A' && ifname[i] <= 'Z') ||
		    (ifname[i] >= '0' && ifname[i] <= '9') ||
		    ifname[i] == '-' || ifname[i] == '_'))
			return false;
	}
	return i > n && i < NFT_IFNAMSIZ;
}

struct nl_sock *
nft_link_sock(char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = NFT_LINK_TIMEOUT_S };
	struct nl_sock *sk;
	int rc;

	if ((sk = nl_socket_alloc()) == NULL) {
		gk_seterr(err, errlen, "rtnetlink socket: out of memory");
		return NULL;
	}
	if ((rc = nl_connect(sk, NETLINK_ROUTE)) < 0) {
		gk_seterr(err, errlen, "rtnetlink socket: %s", nl_geterror(rc));
		nl_socket_free(sk);
		return NULL;
	}
	/* Never wait forever for an ACK. */
	if (setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv)) == -1) {
		gk_seterr(err, errlen, "rtnetlink socket: SO_RCVTIMEO: %s",
		    strerror(errno));
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

int
nft_link_veth_add(struct nl_sock *sk, const char *ifname, int nsfd,
    char *err, size_t errlen)
{
	struct rtnl_link *l, *peer;
	int rc;

	if ((l = rtnl_link_veth_alloc()) == NULL) {
		gk_seterr(err, errlen, "creating veth %s: out of memory",
		    ifname);
		return -1;
	}
	rtnl_link_set_name(l, ifname);
	peer = rtnl_link_veth_get_peer(l);
	rtnl_link_set_name(peer, NFT_CAGE_IFNAME);
	rtnl_link_set_ns_fd(peer, nsfd);
	rc = rtnl_link_add(sk, l, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_link_put(peer);
	rtnl_link_veth_release(l);
	if (rc == -NLE_EXIST && if_nametoindex(ifname) != 0)
		gk_seterr(err, errlen, "creating veth %s: a link of that name "
		    "already exists", ifname);
	else if (rc == -NLE_EXIST)
		gk_seterr(err, errlen, "creating veth %s: the cage already has "
		    "a link named %s", ifname, NFT_CAGE_IFNAME);
	else if (rc < 0)
		gk_seterr(err, errlen, "creating veth %s with peer %s in the "
		    "cage: %s", ifname, NFT_CAGE_IFNAME, nl_geterror(rc));
	return rc < 0 ? -1 : 0;
}

int
nft_link_index(const char *name, int *idx, char *err, size_t errlen)
{
	unsigned i;

	/* An ioctl on a socket of the calling thread's netns: no netlink
	 * round trip. */
	if ((i = if_nametoindex(name)) == 0) {
		gk_seterr(err, errlen, "looking up link %s: %s", name,
		    strerror(errno));
		return -1;
	}
	*idx = (int)i;
	return 0;
}

/* Set link idx (called name, for messages) up. */
static int
link_up(struct nl_sock *sk, int idx, const char *name, char *err,
    size_t errlen)
{
	struct rtnl_link *l, *chg = NULL;
	int rc = -NLE_NOMEM;

	if ((l = rtnl_link_alloc()) == NULL || (chg = rtnl_link_alloc()) ==
	    NULL)
		goto fail;
	rtnl_link_set_ifindex(l, idx);
	rtnl_link_set_flags(chg, IFF_UP);
	if ((rc = rtnl_link_change(sk, l, chg, 0)) < 0)
		goto fail;
	rtnl_link_put(chg);
	rtnl_link_put(l);
	return 0;
fail:
	gk_seterr(err, errlen, "setting link %s up: %s", name, nl_geterror(rc));
	if (chg != NULL)
		rtnl_link_put(chg);
	if (l != NULL)
		rtnl_link_put(l);
	return -1;
}

static struct nl_addr *
addr4(struct in_addr a, int prefixlen)
{
	struct nl_addr *na;

	if ((na = nl_addr_build(AF_INET, &a, sizeof(a))) != NULL)
		nl_addr_set_prefixlen(na, prefixlen);
	return na;
}

/* a/32 on link idx (named ifname, for messages). */
static int
addr_add(struct nl_sock *sk, int idx, const char *ifname, struct in_addr a,
    char *err, size_t errlen)
{
	char buf[INET_ADDRSTRLEN];
	struct rtnl_addr *ra;
	struct nl_addr *local;
	int rc = -NLE_NOMEM;

	if ((ra = rtnl_addr_alloc()) == NULL)
		goto fail;
	if ((local = addr4(a, 32)) == NULL)
		goto fail;
	rtnl_addr_set_ifindex(ra, idx);
	rtnl_addr_set_family(ra, AF_INET);
	rc = rtnl_addr_set_local(ra, local);
	nl_addr_put(local);
	if (rc == 0)
		rc = rtnl_addr_add(sk, ra, 0);
	if (rc < 0)
		goto fail;
	rtnl_addr_put(ra);
	return 0;
fail:
	inet_ntop(AF_INET, &a, buf, sizeof(buf));
	gk_seterr(err, errlen, "adding address %s/32 to %s: %s", buf, ifname,
	    nl_geterror(rc));
	if (ra != NULL)
		rtnl_addr_put(ra);
	return -1;
}

/* Set an IPv4 address attribute of r or nh through setter f. */
static int
set_addr(int (*f)(void *, struct nl_addr *), void *obj, struct in_addr a,
    int plen)
{
	struct nl_addr *na;
	int rc;

	if ((na = addr4(a, plen)) == NULL)
		return -NLE_NOMEM;
	rc = f(obj, na);		/* takes its own reference */
	nl_addr_put(na);
	return rc;
}

static int
set_dst(void *r, struct nl_addr *a)
{
	return rtnl_route_set_dst(r, a);
}

static int
set_pref_src(void *r, struct nl_addr *a)
{
	return rtnl_route_set_pref_src(r, a);
}

static int
set_gateway(void *nh, struct nl_addr *a)
{
	rtnl_route_nh_set_gateway(nh, a);
	return 0;
}

/*
 * Route dst/plen via link idx: with a gateway (onlink) for the cage's
 * default route, else scope link with preferred source src.
 */
static int
route_add(struct nl_sock *sk, int idx, struct in_addr dst, int plen,
    const struct in_addr *gw, const struct in_addr *src)
{
	struct rtnl_route *r;
	struct rtnl_nexthop *nh;
	int rc;

	if ((r = rtnl_route_alloc()) == NULL)
		return -NLE_NOMEM;
	rtnl_route_set_family(r, AF_INET);
	rtnl_route_set_table(r, RT_TABLE_MAIN);
	rtnl_route_set_protocol(r, RTPROT_STATIC);
	rtnl_route_set_scope(r, gw != NULL ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK);
	if ((rc = set_addr(set_dst, r, dst, plen)) < 0)
		goto out;
	if (src != NULL && (rc = set_addr(set_pref_src, r, *src, 32)) < 0)
		goto out;
	if ((nh = rtnl_route_nh_alloc()) == NULL) {
		rc = -NLE_NOMEM;
		goto out;
	}
	rtnl_route_nh_set_ifindex(nh, idx);
	rtnl_route_add_nexthop(r, nh);		/* r owns nh now */
	if (gw != NULL) {
		if ((rc = set_addr(set_gateway, nh, *gw, 32)) < 0)
			goto out;
		rtnl_route_nh_set_flags(nh, RTNH_F_ONLINK);
	}
	rc = rtnl_route_add(sk, r, NLM_F_EXCL);
out:
	rtnl_route_put(r);
	return rc < 0 ? rc : 0;
}

int
nft_link_host_setup(struct nl_sock *sk, const char *ifname,
    struct in_addr gw, struct in_addr cage, char *err, size_t errlen)
{
	char buf[INET_ADDRSTRLEN];
	int idx, rc;

	/* Before the link goes up: no IPv6 autoconfiguration, ever. */
	if (nft_sysctl_host(ifname, err, errlen) == -1)
		return -1;
	if (nft_link_index(ifname, &idx, err, errlen) == -1 ||
	    link_up(sk, idx, ifname, err, errlen) == -1 ||
	    addr_add(sk, idx, ifname, gw, err, errlen) == -1)
		return -1;
	if ((rc = route_add(sk, idx, cage, 32, NULL, &gw)) < 0) {
		inet_ntop(AF_INET, &cage, buf, sizeof(buf));
		gk_seterr(err, errlen, "adding route %s/32 dev %s: %s", buf,
		    ifname, nl_geterror(rc));
		return -1;
	}
	return 0;
}

int
nft_link_cage_setup(struct nl_sock *csk, int lo, int eth0, struct in_addr gw,
    struct in_addr cage, char *err, size_t errlen)
{
	struct in_addr any = { 0 };
	int rc;

	if (link_up(csk, lo, "lo", err, errlen) == -1 ||
	    link_up(csk, eth0, "the cage's " NFT_CAGE_IFNAME, err,
	    errlen) == -1 ||
	    addr_add(csk, eth0, "the cage's " NFT_CAGE_IFNAME, cage, err,
	    errlen) == -1)
		return -1;
	if ((rc = route_add(csk, eth0, any, 0, &gw, NULL)) < 0) {
		gk_seterr(err, errlen, "adding the cage's default route: %s",
		    nl_geterror(rc));
		return -1;
	}
	return 0;
}

int
nft_link_del(struct nl_sock *sk, const char *ifname, char *err,
    size_t errlen)
{
	struct rtnl_link *l;
	int rc;

	if ((l = rtnl_link_alloc()) == NULL) {
		gk_seterr(err, errlen, "deleting link %s: out of memory",
		    ifname);
		return -1;
	}
	rtnl_link_set_name(l, ifname);
	rc = rtnl_link_delete(sk, l);
	rtnl_link_put(l);
	if (rc == -NLE_NODEV || rc == -NLE_OBJ_NOTFOUND)
		return 1;
	if (rc < 0) {
		gk_seterr(err, errlen, "deleting link %s: %s", ifname,
		    nl_geterror(rc));
		return -1;
	}
	return 0;
}

static int
link_cache(struct nl_sock *sk, struct nl_cache **cache, char *err,
    size_t errlen)
{
	int rc;

	if ((rc = rtnl_link_alloc_cache(sk, AF_UNSPEC, cache)) < 0) {
		gk_seterr(err, errlen, "listing links: %s", nl_geterror(rc));
		return -1;
	}
	return 0;
}

int
nft_link_sweep(struct nl_sock *sk, unsigned *n, char *err, size_t errlen)
{
	struct nl_cache *cache;
	struct nl_object *o;
	const char *name, *type;
	char (*names)[NFT_IFNAMSIZ];
	size_t i, cnt = 0, pre = strlen(NFT_IFNAME_PREFIX);
	int rc = 0;

	*n = 0;
	if (link_cache(sk, &cache, err, errlen) == -1)
		return -1;
	names = calloc((size_t)nl_cache_nitems(cache) + 1, sizeof(*names));
	if (names == NULL) {
		nl_cache_free(cache);
		gk_seterr(err, errlen, "listing links: out of memory");
		return -1;
	}
	for (o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o)) {
		name = rtnl_link_get_name((struct rtnl_link *)o);
		type = rtnl_link_get_type((struct rtnl_link *)o);
		if (name != NULL && type != NULL && strcmp(type, "veth") == 0 &&
		    strncmp(name, NFT_IFNAME_PREFIX, pre) == 0)
			snprintf(names[cnt++], NFT_IFNAMSIZ, "%s", name);
	}
	nl_cache_free(cache);
	/* Both ends of a pair may match; the second is then gone (1). */
	for (i = 0; i < cnt && rc != -1; i++)
		if ((rc = nft_link_del(sk, names[i], err, errlen)) == 0)
			(*n)++;
	free(names);
	return rc == -1 ? -1 : 0;
}

int
nft_link_list(struct nl_sock *sk, char *buf, size_t len, char *err,
    size_t errlen)
{
	struct nl_cache *cache;
	struct nl_object *o;
	const char *name;
	size_t off = 0;
	int cnt = 0;

	if (link_cache(sk, &cache, err, errlen) == -1)
		return -1;
	buf[0] = '\0';
	for (o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o)) {
		name = rtnl_link_get_name((struct rtnl_link *)o);
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
			    cnt ? ", " : "", name ? name : "?");
		cnt++;
	}
	nl_cache_free(cache);
	return cnt;
}

/*
 * nft_pool: the cage address pool. Pure: no I/O, no logging.
 *
 * One bit per address of the subnet in `busy` (allocated, draining or
 * reserved), one in `drain` (teardown running) and one in each `flag[]`
 * (the caller's, kept while the address is out). Allocation is next-fit:
 * the search starts after the last address handed out, so an address
 * that was just released is reused only after the cursor has gone round.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>

#include "nft/nft_int.h"

#define NFT_POOL_MINPREFIX	8
#define NFT_POOL_MAXPREFIX	30

struct nft_pool {
	uint32_t	 base;		/* network address, host order */
	uint32_t	 size;		/* addresses in the subnet */
	uint32_t	 gw;		/* gateway offset, or UINT32_MAX */
	uint32_t	 next;		/* next-fit cursor (offset) */
	uint32_t	 nfree;
	uint64_t	*busy;
	uint64_t	*drain;
	uint64_t	*flag[NFT_POOL_FLAGS];
};

static bool
bit_get(const uint64_t *v, uint32_t i)
{
	return (v[i / 64] >> (i % 64)) & 1;
}

static void
bit_set(uint64_t *v, uint32_t i, bool on)
{
	if (on)
		v[i / 64] |= (uint64_t)1 << (i % 64);
	else
		v[i / 64] &= ~((uint64_t)1 << (i % 64));
}

/* A usable cage subnet: a prefix of NFT_POOL_MINPREFIX to
 * NFT_POOL_MAXPREFIX, no host bits. 0, or -1 (EINVAL) with err. */
static int
subnet_check(struct in_addr subnet, uint8_t prefix, char *err,
    size_t errlen)
{
	uint32_t net = ntohl(subnet.s_addr);
	char buf[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &subnet, buf, sizeof(buf));
	if (prefix < NFT_POOL_MINPREFIX || prefix > NFT_POOL_MAXPREFIX)
		gk_seterr(err, errlen, "cage subnet %s/%u: the prefix must be "
		    "/%d to /%d (a /31 or /32 has no room for cages)", buf,
		    prefix, NFT_POOL_MINPREFIX, NFT_POOL_MAXPREFIX);
	else if ((net & ((1u << (32 - prefix)) - 1)) != 0)
		gk_seterr(err, errlen, "cage subnet %s/%u has host bits set",
		    buf, prefix);
	else
		return 0;
	errno = EINVAL;
	return -1;
}

struct nft_pool *
nft_pool_new(struct in_addr subnet, uint8_t prefix, struct in_addr gateway,
    char *err, size_t errlen)
{
	struct nft_pool *pl;
	uint32_t net = ntohl(subnet.s_addr), gw, words;
	unsigned f;
	char buf[INET_ADDRSTRLEN];

	if (subnet_check(subnet, prefix, err, errlen) == -1)
		return NULL;
	if ((pl = calloc(1, sizeof(*pl))) == NULL)
		goto nomem;
	pl->base = net;
	pl->size = 1u << (32 - prefix);
	words = (pl->size + 63) / 64;
	pl->busy = calloc(words, sizeof(uint64_t));
	pl->drain = calloc(words, sizeof(uint64_t));
	for (f = 0; f < NFT_POOL_FLAGS; f++)
		if ((pl->flag[f] = calloc(words, sizeof(uint64_t))) == NULL)
			goto nomem;
	if (pl->busy == NULL || pl->drain == NULL)
		goto nomem;
	pl->gw = UINT32_MAX;
	gw = ntohl(gateway.s_addr);
	if (gw - net < pl->size) {
		pl->gw = gw - net;
		if (pl->gw == 0 || pl->gw == pl->size - 1) {
			inet_ntop(AF_INET, &gateway, buf, sizeof(buf));
			gk_seterr(err, errlen, "gateway %s is the network or "
			    "broadcast address of the cage subnet", buf);
			nft_pool_free(pl);
			errno = EINVAL;
			return NULL;
		}
		bit_set(pl->busy, pl->gw, true);
	}
	bit_set(pl->busy, 0, true);
	bit_set(pl->busy, pl->size - 1, true);
	pl->nfree = pl->size - 2 - (pl->gw != UINT32_MAX);
	pl->next = 1;
	return pl;

nomem:
	gk_seterr(err, errlen, "cage address pool: out of memory");
	nft_pool_free(pl);
	errno = ENOMEM;
	return NULL;
}

void
nft_pool_free(struct nft_pool *pl)
{
	unsigned f;

	if (pl == NULL)
		return;
	free(pl->busy);
	free(pl->drain);
	for (f = 0; f < NFT_POOL_FLAGS; f++)
		free(pl->flag[f]);
	free(pl);
}

/* First clear bit of busy in [from, to); to if none. */
static uint32_t
find_free(const struct nft_pool *pl, uint32_t from, uint32_t to)
{
	uint32_t i = from;
	uint64_t w;

	while (i < to) {
		w = ~pl->busy[i / 64] >> (i % 64);
		if (w == 0) {
			i = (i / 64 + 1) * 64;
			continue;
		}
		i += (uint32_t)__builtin_ctzll(w);
		return i < to ? i : to;
	}
	return to;
}

int
nft_pool_alloc(struct nft_pool *pl, struct in_addr *out)
{
	uint32_t i;

	if (pl->nfree == 0) {
		errno = ENOSPC;
		return -1;
	}
	i = find_free(pl, pl->next, pl->size);
	if (i == pl->size)
		i = find_free(pl, 0, pl->next);
	if (i >= pl->size) {		/* nfree says otherwise: a bug */
		errno = ENOSPC;
		return -1;
	}
	bit_set(pl->busy, i, true);
	pl->nfree--;
	pl->next = i + 1 < pl->size ? i + 1 : 0;
	out->s_addr = htonl(pl->base + i);
	return 0;
}

enum nft_pool_state
nft_pool_state(const struct nft_pool *pl, struct in_addr a)
{
	uint32_t i = ntohl(a.s_addr) - pl->base;

	if (i >= pl->size)
		return NFT_POOL_OUTSIDE;
	if (i == 0 || i == pl->size - 1 || i == pl->gw)
		return NFT_POOL_RESERVED;
	if (!bit_get(pl->busy, i))
		return NFT_POOL_FREE;
	return bit_get(pl->drain, i) ? NFT_POOL_DRAINING : NFT_POOL_USED;
}

/* Move a from state `from` to `to` (FREE, USED or DRAINING). */
static int
move(struct nft_pool *pl, struct in_addr a, enum nft_pool_state from,
    enum nft_pool_state to)
{
	uint32_t i = ntohl(a.s_addr) - pl->base;
	unsigned f;

	if (nft_pool_state(pl, a) != from) {
		errno = EINVAL;
		return -1;
	}
	bit_set(pl->busy, i, to != NFT_POOL_FREE);
	bit_set(pl->drain, i, to == NFT_POOL_DRAINING);
	if (to == NFT_POOL_FREE) {
		for (f = 0; f < NFT_POOL_FLAGS; f++)
			bit_set(pl->flag[f], i, false);
		pl->nfree++;
	}
	return 0;
}

int
nft_pool_release(struct nft_pool *pl, struct in_addr a)
{
	return move(pl, a, NFT_POOL_USED, NFT_POOL_FREE);
}

int
nft_pool_drain(struct nft_pool *pl, struct in_addr a)
{
	return move(pl, a, NFT_POOL_USED, NFT_POOL_DRAINING);
}

int
nft_pool_drained(struct nft_pool *pl, struct in_addr a)
{
	return move(pl, a, NFT_POOL_DRAINING, NFT_POOL_FREE);
}

int
nft_pool_set_flag(struct nft_pool *pl, struct in_addr a, unsigned which,
    bool on)
{
	if (which >= NFT_POOL_FLAGS || nft_pool_state(pl, a) !=
	    NFT_POOL_USED) {
		errno = EINVAL;
		return -1;
	}
	bit_set(pl->flag[which], ntohl(a.s_addr) - pl->base, on);
	return 0;
}

bool
nft_pool_flag(const struct nft_pool *pl, struct in_addr a, unsigned which)
{
	uint32_t i = ntohl(a.s_addr) - pl->base;

	return which < NFT_POOL_FLAGS && i < pl->size &&
	    bit_get(pl->flag[which], i);
}

uint32_t
nft_pool_nfree(const struct nft_pool *pl)
{
	return pl->nfree;
}

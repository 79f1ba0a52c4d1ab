/*
 * spawn_gitindex: the gitlinks (submodule entries, mode 160000) of a git
 * index file, read from its bytes. Pure: no I/O.
 *
 * The format (git's Documentation/gitformat-index.txt): a 12-byte header
 * ("DIRC", version 2, 3 or 4, the entry count, big-endian), then the
 * entries, sorted by path:
 *   40 bytes of stat data (ctime, mtime, dev, ino, mode, uid, gid, size;
 *   mode at offset 24), the object id (20 bytes with SHA-1, 32 with
 *   SHA-256: the caller says which), 2 bytes of flags (the path's length
 *   in the low 12 bits, 0xfff when longer; 0x4000: 2 more bytes of
 *   extended flags, version 3 and later), then the path:
 *   - versions 2 and 3: the whole path, NUL-terminated, and NUL padding
 *     to a multiple of 8 bytes from the entry's start (1 to 8 NULs);
 *   - version 4: a varint N (bytes to drop from the previous entry's
 *     path) and the rest of the path, NUL-terminated, no padding.
 * Extensions follow (a 4-byte signature, a 4-byte size, the data), then
 * the checksum (an object id's length). Only "link" is read: a split
 * index, whose shared entries are in the file sharedindex.<its first
 * object id, in hex>, read the same way.
 */
#include <stdint.h>
#include <string.h>

#include "spawner/spawn.h"

#define INDEX_HEADER		12
#define ENTRY_STAT		40	/* ctime .. size */
#define ENTRY_MODE_AT		24
#define FLAG_EXTENDED		0x4000
#define MODE_GITLINK		0160000
#define MODE_TYPE		0170000

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* Git's offset varint (varint.c): 7 bits a byte, each continuation adding
 * one. Bytes used, or 0 when it does not end in buf or overflows. */
static size_t
varint(const uint8_t *buf, size_t len, size_t *out)
{
	size_t i = 0, v;

	if (len == 0)
		return 0;
	v = buf[0] & 0x7f;
	while (buf[i] & 0x80) {
		if (++i == len || v > (SIZE_MAX >> 7) - 1)
			return 0;
		v = ((v + 1) << 7) | (buf[i] & 0x7f);
	}
	*out = v;
	return i + 1;
}

/* The "link" extension among those at buf[off..end), into *link. */
static void
find_link(const uint8_t *buf, size_t off, size_t end, size_t oidlen,
    struct spawn_gitindex_link *link)
{
	uint32_t size;

	while (end - off >= 8) {
		size = be32(buf + off + 4);
		if (size > end - off - 8)
			return;		/* not an extension: git says so */
		if (memcmp(buf + off, "link", 4) == 0 && size >= oidlen) {
			link->split = true;
			memcpy(link->shared, buf + off + 8, oidlen);
			return;
		}
		off += 8 + size;
	}
}

/*
 * The entry at buf[*off..len) (the version's layout, see the top): its
 * mode into *mode and its whole path into path (plen: the previous
 * entry's path length in, this one's out), *off moved past it. false
 * when it is cut short or inconsistent.
 */
static bool
entry(const uint8_t *buf, size_t len, size_t *off, uint32_t version,
    size_t oidlen, uint32_t *mode, char *path, size_t *plen)
{
	size_t fixed = ENTRY_STAT + oidlen + 2, name = fixed, drop, n, nul;
	const uint8_t *e = buf + *off, *z;
	uint16_t flags;

	if (len - *off < fixed)
		return false;
	*mode = be32(e + ENTRY_MODE_AT);
	flags = (uint16_t)(e[fixed - 2] << 8 | e[fixed - 1]);
	if (flags & FLAG_EXTENDED) {
		if (version < 3 || len - *off < fixed + 2)
			return false;
		name += 2;
	}
	if (version == 4) {
		if ((n = varint(e + name, len - *off - name, &drop)) == 0 ||
		    drop > *plen)
			return false;
		name += n;
		*plen -= drop;
	} else
		*plen = 0;
	if ((z = memchr(e + name, '\0', len - *off - name)) == NULL)
		return false;
	nul = (size_t)(z - (e + name));
	if (*plen + nul >= SPAWN_GITINDEX_PATH_MAX)
		return false;
	memcpy(path + *plen, e + name, nul);
	*plen += nul;
	path[*plen] = '\0';
	/* the flags hold the whole path's length (0xfff: longer) */
	if (*plen == 0 || (flags & 0xfff) != (*plen < 0xfff ? *plen : 0xfff))
		return false;
	if (version == 4)
		n = name + nul + 1;
	else if (len - *off < (n = (name + nul + 8) & ~(size_t)7))
		return false;	/* NUL padding to a multiple of 8, >= 1 */
	*off += n;
	return true;
}

enum spawn_gitindex_st
spawn_gitindex_gitlinks(const uint8_t *buf, size_t len, size_t oidlen,
    spawn_gitlink_fn fn, void *arg, struct spawn_gitindex_link *link)
{
	char path[SPAWN_GITINDEX_PATH_MAX];
	size_t off = INDEX_HEADER, plen = 0;
	uint32_t version, count, i, mode;

	if (link != NULL)
		memset(link, 0, sizeof(*link));
	if ((oidlen != 20 && oidlen != 32) || len < INDEX_HEADER ||
	    memcmp(buf, "DIRC", 4) != 0)
		return SPAWN_GITINDEX_INVALID;
	version = be32(buf + 4);
	count = be32(buf + 8);
	if (version < 2 || version > 4)
		return SPAWN_GITINDEX_UNSUPPORTED;
	for (i = 0; i < count; i++) {
		if (!entry(buf, len, &off, version, oidlen, &mode, path, &plen))
			return SPAWN_GITINDEX_INVALID;
		if ((mode & MODE_TYPE) == MODE_GITLINK && fn != NULL)
			fn(arg, path, plen);
	}
	if (link != NULL && len - off >= oidlen)
		find_link(buf, off, len - oidlen, oidlen, link);
	return SPAWN_GITINDEX_OK;
}

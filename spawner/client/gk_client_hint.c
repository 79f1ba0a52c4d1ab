/*
 * gk_client_hint: what a failed connect to gatekeeperd's control socket
 * means for the person who typed the command, and what to type next:
 * the one message both clients (gk-run, gatekeeperctl) print after their
 * own prefix. The advice fits the host: `systemctl start gatekeeperd`
 * where systemd runs it, the recipe without systemd elsewhere
 * (containers, CI images, WSL); the user to add to the group is named.
 */
#include <sys/stat.h>

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gatekeeper/base/gk_err.h"
#include "gatekeeper/policy/gk_proto.h"
#include "spawner/client/gk_client.h"

#define NO_SYSTEMD_START						\
	"this host has no systemd; start it as root: gatekeeperd "	\
	">>/var/log/gatekeeperd.log 2>&1 & (or under a supervisor: "	\
	"README, \"Hosts without systemd\")"

void
gk_client_open_msg(int e, const char *path, int timeout_ms, bool systemd,
    const char *user, char *msg, size_t len)
{
	switch (e) {
	case ENOENT:
	case ECONNREFUSED:
	case ENOTDIR:
		gk_seterr(msg, len, "cannot reach gatekeeperd at %s (%s): is "
		    "gatekeeperd running? %s", path, strerror(e), systemd ?
		    "start it with: systemctl start gatekeeperd" :
		    NO_SYSTEMD_START);
		break;
	case EACCES:
	case EPERM:
		gk_seterr(msg, len, "cannot reach gatekeeperd at %s (%s): "
		    "only root and members of group " GK_CONTROL_GROUP " may "
		    "use it; ask an administrator to add you to it (usermod "
		    "-aG " GK_CONTROL_GROUP " %s, then log in again)", path,
		    strerror(e), user != NULL && user[0] != '\0' ? user :
		    "USER");
		break;
	case EAGAIN:
	case ETIMEDOUT:
		gk_seterr(msg, len, "cannot reach gatekeeperd at %s: it did "
		    "not accept the connection within %d s; is it stuck? see "
		    "%s", path, timeout_ms / 1000, systemd ?
		    "journalctl -u gatekeeperd" : "its log");
		break;
	default:
		gk_seterr(msg, len, "cannot reach gatekeeperd at %s (%s)",
		    path, strerror(e));
		break;
	}
}

bool
gk_client_systemd(const char *root)
{
	char path[4096];
	struct stat st;

	/* as sd_booted() tells it */
	if ((size_t)snprintf(path, sizeof(path), "%s/run/systemd/system",
	    root != NULL ? root : "") >= sizeof(path))
		return false;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void
gk_client_open_error(int e, const char *path, int timeout_ms, char *msg,
    size_t len)
{
	struct passwd *pw = getpwuid(getuid());

	gk_client_open_msg(e, path, timeout_ms, gk_client_systemd(""),
	    pw != NULL ? pw->pw_name : NULL, msg, len);
}

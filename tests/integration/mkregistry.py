"""mkregistry.py WWW PROJECTS: the package registries of the test internet.

Writes static files that nginx serves as they are (e2e_net.sh):

  WWW/registry.npmjs.org/      npm's registry protocol
      <name>/index.json            the packument (GET /<name>)
      <name>/-/<name>-<ver>.tgz    the tarball (npm pack's layout: package/)
  WWW/pypi.org/simple/          PEP 503's simple index
      index.html                   every project
      <project>/index.html         links to its files, #sha256=<hex>
  WWW/files.pythonhosted.org/packages/py3/<c>/<name>/<file>   the files

and, for the tests, PROJECTS/npm-ci/ (package.json and the
package-lock.json `npm ci` installs from).

Packages, all written here: npm left-pad 1.3.0 (a left-pad function),
gk-dep 1.0.0 (greet(name) -> "hello from <name>"), gk-hello 1.0.0
(depends on gk-dep ^1.0.0; its bin gk-hello prints greet("gk-hello"));
PyPI gk_greet 1.0 (a pure-Python wheel, py3-none-any; greet() returns
"hello from gk_greet"). Nothing here uses the network; the output is
the same on every run (fixed times in the archives).
"""
import base64
import gzip
import hashlib
import html
import io
import json
import os
import sys
import tarfile
import zipfile

NPM_HOST = "registry.npmjs.org"
PYPI_HOST = "pypi.org"
FILES_HOST = "files.pythonhosted.org"
MTIME = 499162500  # npm pack's fixed time (1985-10-26T08:15:00Z)

LEFT_PAD = """'use strict';
module.exports = function leftPad(str, len, ch) {
  str = String(str);
  ch = ch === undefined || ch === '' ? ' ' : String(ch);
  while (str.length < len) str = ch + str;
  return str;
};
"""
GK_DEP = """'use strict';
exports.greet = function greet(name) { return 'hello from ' + name; };
"""
GK_HELLO_BIN = """#!/usr/bin/env node
'use strict';
console.log(require('gk-dep').greet('gk-hello'));
"""

NPM_PACKAGES = [
    ("left-pad", "1.3.0", {}, {}, {"index.js": LEFT_PAD}),
    ("gk-dep", "1.0.0", {}, {}, {"index.js": GK_DEP}),
    ("gk-hello", "1.0.0", {"gk-dep": "^1.0.0"},
     {"gk-hello": "bin/gk-hello.js"}, {"bin/gk-hello.js": GK_HELLO_BIN}),
]

GK_GREET = '''"""gk_greet: a test package of gatekeeper's package registry."""


def greet():
    return "hello from gk_greet"
'''


def write(path, data, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.chmod(path, mode)


def npm_tarball(manifest, files):
    """A .tgz as npm pack makes it: every entry under package/."""
    buf = io.BytesIO()
    entries = {"package.json": json.dumps(manifest, indent=2) + "\n"}
    entries.update(files)
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w",
                         format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(entries):
            data = entries[name].encode()
            info = tarfile.TarInfo("package/" + name)
            info.size = len(data)
            info.mtime = MTIME
            info.mode = 0o755 if name.startswith("bin/") else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def npm_registry(www):
    """Publish NPM_PACKAGES; return name -> the lock entry of its version."""
    locks = {}
    for name, ver, deps, bins, files in NPM_PACKAGES:
        manifest = {"name": name, "version": ver,
                    "description": "gatekeeper test package " + name,
                    "license": "MIT"}
        if "index.js" in files:
            manifest["main"] = "index.js"
        if deps:
            manifest["dependencies"] = deps
        if bins:
            manifest["bin"] = bins
        tgz = npm_tarball(manifest, files)
        fname = "%s-%s.tgz" % (name, ver)
        url = "https://%s/%s/-/%s" % (NPM_HOST, name, fname)
        integrity = "sha512-" + base64.b64encode(
            hashlib.sha512(tgz).digest()).decode()
        write(os.path.join(www, NPM_HOST, name, "-", fname), tgz)
        version = dict(manifest)
        version["_id"] = "%s@%s" % (name, ver)
        version["dist"] = {"tarball": url,
                           "shasum": hashlib.sha1(tgz).hexdigest(),
                           "integrity": integrity}
        packument = {"_id": name, "name": name,
                     "dist-tags": {"latest": ver},
                     "versions": {ver: version},
                     "time": {ver: "1985-10-26T08:15:00.000Z"}}
        write(os.path.join(www, NPM_HOST, name, "index.json"),
              json.dumps(packument, indent=2) + "\n")
        lock = {"version": ver, "resolved": url, "integrity": integrity,
                "license": "MIT"}
        if deps:
            lock["dependencies"] = deps
        if bins:
            lock["bin"] = bins
        locks[name] = lock
    return locks


def npm_ci_project(projects, locks):
    """A project with a package-lock.json (v3) for npm ci."""
    d = os.path.join(projects, "npm-ci")
    deps = {"gk-hello": "^1.0.0", "left-pad": "^1.3.0"}
    pkg = {"name": "gk-ci-project", "version": "1.0.0", "private": True,
           "dependencies": deps}
    packages = {"": {"name": pkg["name"], "version": pkg["version"],
                     "dependencies": deps}}
    for name in sorted(locks):
        packages["node_modules/" + name] = locks[name]
    lock = {"name": pkg["name"], "version": pkg["version"],
            "lockfileVersion": 3, "requires": True, "packages": packages}
    write(os.path.join(d, "package.json"), json.dumps(pkg, indent=2) + "\n")
    write(os.path.join(d, "package-lock.json"),
          json.dumps(lock, indent=2) + "\n")


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(
        hashlib.sha256(data).digest()).decode().rstrip("=")


def wheel(name, ver, files):
    """A pure-Python wheel (PEP 427): FILES, then the dist-info."""
    di = "%s-%s.dist-info" % (name, ver)
    entries = dict(files)
    entries[di + "/METADATA"] = (
        "Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
        "Summary: gatekeeper test package %s\nLicense: MIT\n" %
        (name, ver, name))
    entries[di + "/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: gatekeeper-mkregistry\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n")
    entries[di + "/top_level.txt"] = name + "\n"
    record = "".join("%s,%s,%d\n" % (p, record_hash(d.encode()),
                                      len(d.encode()))
                     for p, d in sorted(entries.items()))
    entries[di + "/RECORD"] = record + di + "/RECORD,,\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        rec = di + "/RECORD"
        for p in sorted(files) + sorted(
                k for k in entries if k not in files and k != rec) + [rec]:
            zi = zipfile.ZipInfo(p, date_time=(1985, 10, 26, 8, 15, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            z.writestr(zi, entries[p])
    return buf.getvalue()


def pypi(www):
    name, ver, project = "gk_greet", "1.0", "gk-greet"
    whl = wheel(name, ver, {name + "/__init__.py": GK_GREET})
    fname = "%s-%s-py3-none-any.whl" % (name, ver)
    rel = "packages/py3/%s/%s/%s" % (name[0], name, fname)
    write(os.path.join(www, FILES_HOST, rel), whl)
    href = "https://%s/%s#sha256=%s" % (FILES_HOST, rel,
                                       hashlib.sha256(whl).hexdigest())
    page = ("<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-"
            "version\" content=\"1.0\"><title>Links for %s</title></head>\n"
            "<body>\n<h1>Links for %s</h1>\n<a href=\"%s\">%s</a><br/>\n"
            "</body>\n</html>\n" % (project, project, html.escape(href),
                                    fname))
    write(os.path.join(www, PYPI_HOST, "simple", project, "index.html"), page)
    root = ("<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-"
            "version\" content=\"1.0\"><title>Simple index</title></head>\n"
            "<body>\n<a href=\"/simple/%s/\">%s</a>\n</body>\n</html>\n" %
            (project, project))
    write(os.path.join(www, PYPI_HOST, "simple", "index.html"), root)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: mkregistry.py WWW PROJECTS\n")
        return 2
    www, projects = sys.argv[1], sys.argv[2]
    npm_ci_project(projects, npm_registry(www))
    pypi(www)
    return 0


if __name__ == "__main__":
    sys.exit(main())

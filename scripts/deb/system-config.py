#!/usr/bin/python3
"""Writes /etc/eddy/eddy.properties of the Debian package: the gateway
configuration (config/gateway.properties, what `make run` uses) with what a
system install changes: the data directory is the service's state
directory, and the paths in the comments are the installed ones.

  system-config.py config/gateway.properties OUTPUT

Every edit names the text it replaces; when gateway.properties no longer
has it, this fails instead of shipping a half-edited file."""

import sys

EDITS = [
    ("# Eddy on a gateway board (the default of `make run`).\n",
     "# Eddy on a gateway board, run as the systemd service eddy.service (the\n"
     "# eddy Debian package). After an edit: `systemctl restart eddy`; the log is\n"
     "# in `journalctl -u eddy`. Upgrades keep your edits (dpkg asks when the\n"
     "# packaged file changed as well).\n"),
    ("# Partition logs and the metadata database live here (relative to the\n"
     "# directory eddy is started from).\n"
     "log.dirs=./data\n",
     "# Partition logs and the metadata database live here: the service's state\n"
     "# directory (StateDirectory=eddy), owned by the user eddy; the only place\n"
     "# the service may write. Removing the package keeps it, purging deletes it.\n"
     "log.dirs=/var/lib/eddy\n"),
    ("`eddy forward status --config config/gateway.properties`",
     "`sudo eddy forward status --config /etc/eddy/eddy.properties`"),
    ("commented example: examples/forwarding-gateway.properties.",
     "commented example:\n# /usr/share/doc/eddy/examples/forwarding-gateway.properties."),
]


def main():
    source, output = sys.argv[1:3]
    with open(source) as f:
        text = f.read()
    for old, new in EDITS:
        if text.count(old) != 1:
            sys.exit("system-config: %s does not contain exactly one %r" % (source, old.splitlines()[0]))
        text = text.replace(old, new)
    with open(output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()

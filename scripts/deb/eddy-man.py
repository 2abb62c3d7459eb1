#!/usr/bin/python3
"""Writes the eddy(1) manual page (roff) from what the eddy binary says
about itself, so that the page never disagrees with the program it ships
with: `eddy help` (synopsis, commands), `eddy TOOL --help` for each tool it
lists (options) and `eddy help config` (the configuration reference, a
Markdown table). FILES and SERVICE describe the Debian package's layout.

  eddy-man.py --eddy "qemu-aarch64 build-aarch64/eddy" --version 0.1.0 \\
      --date 2026-12-01 --output eddy.1

--eddy is a command line (an emulator may come first). Exits non-zero when
eddy fails or its help has an unexpected shape: a page without its
sections is worse than none, because lintian would not notice."""

import argparse
import re
import shlex
import subprocess
import sys

PAIR = re.compile(r"^  (\S.*?)\s{2,}(\S.*)$")  # "  --flag ARG    what it does"
HEADING = re.compile(r"^[A-Z][A-Za-z ]*:$")    # "Options:"


def roff(text):
    """Text safe in a roff line: backslashes escaped, '-' as \\- (the
    ASCII minus that options need), and a leading '.' or "'" neutralised."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def run(eddy, *args):
    result = subprocess.run(eddy + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit("eddy-man: `%s` exited %d: %s" % (" ".join(eddy + list(args)), result.returncode, result.stderr))
    return result.stdout


def render_help(text):
    """A tool's --help: Usage lines in bold, "Heading:" lines as
    subheadings, two-column lines as tagged paragraphs, the rest as text."""
    out = []
    for line in text.splitlines():
        pair = PAIR.match(line)
        if not line.strip():
            continue
        if line.startswith("Usage: "):
            out += [".PP", ".B " + roff(line[len("Usage: "):])]
        elif HEADING.match(line):
            out += [".PP", ".I " + roff(line[:-1])]
        elif pair:
            out += [".TP", ".B " + roff(pair.group(1)), roff(pair.group(2))]
        else:
            out += [".PP", roff(line.strip())]
    return out


def parse_usage(text):
    """From `eddy help`: the title line's summary, the (command line,
    description) pairs under "Usage:", and the closing paragraph."""
    lines = text.splitlines()
    title = re.match(r"^eddy \S+ - (.+)$", lines[0])
    if not title or "Usage:" not in lines:
        sys.exit("eddy-man: `eddy help` does not start with 'eddy VERSION - ...' and a Usage: section")
    commands, rest = [], []
    for line in lines[lines.index("Usage:") + 1:]:
        pair = PAIR.match(line)
        if pair and not rest:
            commands.append((pair.group(1), pair.group(2)))
        elif line.strip():
            rest.append(line.strip())
    if not commands:
        sys.exit("eddy-man: no commands under Usage: in `eddy help`")
    return title.group(1), commands, rest


def config_reference(markdown):
    """`eddy help config`'s table (| key | default | meaning |) as tagged
    paragraphs."""
    out, rows = [], 0
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("key", "---"):
            continue
        key, default, meaning = (c.replace("`", "") for c in cells)
        out += [".TP", ".B " + roff(key), roff(meaning) + " Default: " + roff(default) + "."]
        rows += 1
    if rows < 10:
        sys.exit("eddy-man: `eddy help config` gave %d keys; expected a table of them" % rows)
    return out


FILES = [
    (".I /etc/eddy/eddy.properties",
     "The service's configuration (a conffile: an upgrade keeps your edits). Changes take effect on "
     "systemctl restart eddy."),
    (".I /var/lib/eddy",
     "The data directory (log.dirs): partition segment files, eddy.db, forward.db and the control "
     "socket eddy.sock. Kept when the package is removed, deleted when it is purged."),
    (".I /lib/systemd/system/eddy.service",
     "The systemd unit: runs eddy serve /etc/eddy/eddy.properties as the system user eddy."),
]

SERVICE = [
    "The Debian package runs eddy as the systemd service",
    ".BR eddy.service :",
    ".B systemctl status eddy",
    "shows whether it serves (eddy reports readiness to systemd once its listeners accept connections),",
    ".B journalctl \\-u eddy",
    "its log, and",
    ".B sudo eddy forward status \\-\\-config /etc/eddy/eddy.properties",
    "the store-and-forward links (the control socket belongs to the user eddy).",
]


def page(eddy, version, date):
    summary, commands, closing = parse_usage(run(eddy, "help"))
    out = ['.TH EDDY 1 "%s" "eddy %s" "User Commands"' % (date, roff(version)),
           ".ad l", ".SH NAME", "eddy \\- " + roff(summary), ".SH SYNOPSIS"]
    for command, _what in commands:
        out += [".B " + roff(command), ".br"]
    out += [".SH DESCRIPTION",
            "Eddy is a single-process message broker for gateway devices that speaks the Apache Kafka wire "
            "protocol: local producers and consumers use any Kafka client, the data is kept on a bounded, "
            "preallocated disk budget, and store-and-forward links send it on to a central Kafka cluster."]
    out += [".PP", roff(" ".join(closing))] if closing else []
    out += [".SH COMMANDS"]
    for command, what in commands:
        out += [".TP", ".B " + roff(command), roff(what)]
    tools = [c.split()[1] for c, _w in commands if c.split()[1] not in ("serve", "help", "--version")]
    out += [".SH TOOLS"]
    for tool in tools:
        out += [".SS eddy " + roff(tool)] + render_help(run(eddy, tool, "--help"))
    out += [".SH CONFIGURATION",
            "eddy serve reads a Kafka-style .properties file; an unknown key or a bad value stops it with "
            "exit code 2 and the file and line. The keys, as printed by",
            '.BR "eddy help config" :'] + config_reference(run(eddy, "help", "config"))
    out += [".SH FILES"]
    for name, what in FILES:
        out += [".TP", name, roff(what)]
    out += [".SH SERVICE"] + SERVICE
    out += [".SH EXIT STATUS", "0 on success (eddy serve: after a clean shutdown on SIGTERM or SIGINT), "
            "2 for a usage or configuration error, 1 for other failures."]
    out += [".SH SEE ALSO", ".BR systemctl (1),", ".BR journalctl (1),", ".BR systemd.service (5)"]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eddy", required=True, help="command line that runs eddy")
    parser.add_argument("--version", required=True)
    parser.add_argument("--date", required=True, help="YYYY-MM-DD for the page footer")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    text = page(shlex.split(args.eddy), args.version, args.date)
    with open(args.output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()

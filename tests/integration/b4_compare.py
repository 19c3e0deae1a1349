#!/usr/bin/env python3
"""b4_compare.py KCANARY_JSON B4_MBX [WHAT...] - compare the patches kcanary read
(`kcanary series show --format json`, one revision) with what `b4 am`
wrote for the same thread (its .mbx), each of b4's messages read by
`git mailinfo` as `git am` would: subject, author, trailers and the diff
bytes (from the first 'diff --git' to the mail signature). Prints one
line per difference and exits 1 when there is any, 0 when they agree.
WHAT names a field (subject, author, trailers, diff) whose difference is
expected: it is printed as "expected" and does not fail."""
import json
import mailbox
import os
import re
import subprocess
import sys
import tempfile


def mailinfo(raw):
    with tempfile.TemporaryDirectory() as d:
        msg, patch = os.path.join(d, "msg"), os.path.join(d, "patch")
        info = subprocess.run(["git", "mailinfo", "-k", msg, patch], input=raw,
                              capture_output=True, check=True).stdout.decode("utf-8", "replace")
        head = dict(l.split(": ", 1) for l in info.splitlines() if ": " in l)
        with open(msg, "rb") as f:
            body = f.read().decode("utf-8", "replace")
        with open(patch, "rb") as f:
            diff = f.read()
    i = diff.find(b"diff --git ")
    diff = diff[i:] if i >= 0 else b""
    # the mail signature: "-- " (git send-email's), or a bare "--" as
    # Outlook sends it (C5), ends the diff as kcanary reads it
    j = diff.find(b"\n-- \n")
    if j >= 0:
        diff = diff[:j + 1]
    diff = re.sub(rb"\n--\n(\n)*$", b"\n", diff)
    trailers = []
    last = body.rstrip("\n").split("\n\n")[-1]
    for line in last.splitlines():
        m = re.match(r"^([A-Za-z0-9-]+): (.*)$", line)
        if m:
            trailers.append((m.group(1), m.group(2).strip()))
    subject = re.sub(r"^\[[^]]*\]\s*", "", head.get("Subject", ""))
    return {"subject": subject, "author": "%s <%s>" % (head.get("Author", ""), head.get("Email", "")),
            "trailers": trailers, "diff": diff}


def main():
    with open(sys.argv[1], "rb") as f:
        series = json.load(f)
    if len(series) != 1:
        print("kcanary read %d revisions, expected 1" % len(series))
        return 1
    ours = series[0]["patches"]
    theirs = [mailinfo(m.as_bytes()) for m in mailbox.mbox(sys.argv[2])]
    bad = 0
    if len(ours) != len(theirs):
        print("kcanary has %d patches, b4 %d" % (len(ours), len(theirs)))
        return 1
    for p, t in zip(ours, theirs):
        k = "%d/%d" % (p["k"], p["m"])
        author = "%s <%s>" % (p["author_name"], p["author_email"])
        # the mail's trailers, then those given in replies (b4 am -t adds
        # both, a cover's to every patch)
        tr = [(x["key"], x["value"]) for x in p["trailers"] + p.get("reply_trailers", [])]
        for what, a, b in (("subject", p["subject"], t["subject"]), ("author", author, t["author"]),
                           ("trailers", tr, t["trailers"]),
                           ("diff", p["diff"].encode("utf-8", "surrogateescape"), t["diff"])):
            if a != b:
                expected = what in sys.argv[3:]
                bad |= not expected
                print("%s%s %s: kcanary %r, b4 %r" % ("expected: " if expected else "", k, what, a if what != "diff" else len(a),
                                                     b if what != "diff" else len(b)))
    return bad


sys.exit(main())

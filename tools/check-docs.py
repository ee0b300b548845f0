#!/usr/bin/env python3
"""check-docs.py -- the documentation against the tree (make check-docs, part of
make test). In README.md, docs/*.md and docs/man/* pages:

  * every relative link resolves: the file exists, and a #fragment names a
    heading of it (GitHub's anchors);
  * every command shown in a code block (fenced, or inline code that starts with
    the program's name) names options that exist: cudarem-server's and
    cudarem-smi's (their --help), tools/gpu-check.sh's (its --help), make's
    targets (the makefiles' rules);
  * every CUDAREM_* variable named anywhere exists in the code that reads it (the
    C, Python and shell sources outside docs).

  usage: tools/check-docs.py BUILD_DIR        exit 1 and one line per finding
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def docs():
    found = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return found + sorted(glob.glob(os.path.join(ROOT, "docs", "man", "*.[0-9]")))


def rel(path):
    return os.path.relpath(path, ROOT)


def anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    with open(path) as f:
        return {anchor(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", f.read(), re.M)}


def check_links(path, text, out):
    for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", text):
        target = m.group(1)
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        file_part, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if not os.path.exists(dest):
            out.append("%s: link to %s: no such file" % (rel(path), target))
        elif frag and dest.endswith(".md") and frag not in anchors(dest):
            out.append("%s: link to %s: %s has no heading with that anchor" % (rel(path), target, rel(dest)))


def help_options(argv):
    try:
        text = subprocess.run(argv + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=20).stdout
    except OSError as e:
        sys.exit("check-docs: cannot run %s: %s" % (argv[0], e))
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", text)) | set(re.findall(r"(?<![\w-])(-[a-zA-Z])\b", text))


def make_targets():
    targets = set()
    for mk in [os.path.join(ROOT, "Makefile")] + glob.glob(os.path.join(ROOT, "**", "*.mk"), recursive=True):
        if "/build" in mk:
            continue
        with open(mk) as f:
            for line in f:
                m = re.match(r"^([A-Za-z][\w./$() -]*?)\s*:(?!=)", line)
                if m:
                    targets.update(t for t in m.group(1).split() if "$" not in t)
                m = re.match(r"^\.PHONY\s*:(.*)", line)
                if m:
                    targets.update(m.group(1).split())
    return targets


def code_variables():
    """CUDAREM_* names the sources use (C, Python, shell, makefiles), docs aside."""
    names = set()
    pats = ["**/*.c", "**/*.h", "**/*.cu", "**/*.py", "**/*.sh", "**/*.mk", "Makefile", "packaging/*", ".ci/*"]
    for pat in pats:
        for path in glob.glob(os.path.join(ROOT, pat), recursive=True):
            if any(part in path for part in ("/build", "/docs/", "/.git/")) or not os.path.isfile(path):
                continue
            if os.path.abspath(path) == os.path.abspath(__file__):
                continue
            with open(path, errors="replace") as f:
                names.update(re.findall(r"\bCUDAREM_[A-Z0-9_]*[A-Z0-9]\b", f.read()))
    return names


def commands(text):
    """(line, command) for each shell command in a fenced block, and each inline
    code span that starts with one of our programs or make."""
    for block in re.finditer(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S):
        joined = block.group(1).replace("\\\n", " ")
        for line in joined.splitlines():
            yield line.strip()
    for span in re.finditer(r"`([^`\n]+)`", text):
        s = span.group(1)
        if re.match(r"(\S*/)?(cudarem-server|cudarem-smi|gpu-check\.sh)\b|make\s", s):
            yield s


PROGRAMS = {"cudarem-server": "server", "cudarem-smi": "smi", "gpu-check.sh": "gpu-check"}


def check_commands(path, text, opts, targets, out):
    for cmd in commands(text):
        cmd = re.sub(r"(^|\s)#.*$", "", cmd)        # a comment
        cmd = re.sub(r"\$\([^)]*\)", "X", cmd)      # a command substitution's inside
        for piece in re.split(r"\s*(?:&&|\|\||;|\|)\s*", cmd):
            words = piece.split()
            # skip leading VAR=value assignments and wrappers
            while words and (re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]) or words[0] in ("sudo", "exec", "env")):
                words = words[1:]
            if not words:
                continue
            prog = os.path.basename(words[0])
            if prog in PROGRAMS:
                for w in words[1:]:
                    opt = w.split("=", 1)[0].rstrip(",.)'\"")
                    if re.match(r"^--?[a-zA-Z][\w-]*$", opt) and opt not in opts[PROGRAMS[prog]]:
                        out.append("%s: `%s`: %s has no option %s" % (rel(path), piece[:80], prog, opt))
            elif prog == "make":
                for w in words[1:]:
                    if w.startswith("-") or "=" in w or not re.match(r"^[\w.-]+$", w):
                        continue
                    if w not in targets:
                        out.append("%s: `%s`: make has no target %s" % (rel(path), piece[:80], w))


def check_file(path, text, opts, targets, variables, out):
    check_links(path, text, out)
    check_commands(path, text, opts, targets, out)
    for v in sorted(set(re.findall(r"\bCUDAREM_[A-Z0-9_]*[A-Z0-9]\b", text)) - variables):
        out.append("%s: %s: no code reads such a variable" % (rel(path), v))


# Stale references of each kind the check is for: it must find every one.
SELF_TEST = """# A heading
[gone](docs/no-such-guide.md), [moved](README.md#no-such-section), [fine](README.md)
```sh
cudarem-server --listen unix:/tmp/s.sock --no-such-option   # a comment --not-checked
cudarem-smi -s X --json && make no-such-target
```
`cudarem-server --max-session 4` and CUDAREM_NO_SUCH_VARIABLE
"""


def self_test(opts, targets, variables):
    out = []
    check_file(os.path.join(ROOT, "self-test.md"), SELF_TEST, opts, targets, variables, out)
    want = ["no-such-guide.md", "README.md#no-such-section", "--no-such-option", "no-such-target",
            "--max-session", "CUDAREM_NO_SUCH_VARIABLE"]
    missed = [w for w in want if not any(w in line for line in out)]
    if missed or len(out) != len(want):
        print("check-docs: the self-test found %s; missed %s" % (out, missed))
        return False
    return True


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    opts = {"server": help_options([os.path.join(build, "cudarem-server")]),
            "smi": help_options([os.path.join(build, "cudarem-smi")]),
            "gpu-check": help_options([os.path.join(ROOT, "tools", "gpu-check.sh")])}
    targets, variables = make_targets(), code_variables()
    if not self_test(opts, targets, variables):
        return 1
    out = []
    for path in docs():
        with open(path) as f:
            check_file(path, f.read(), opts, targets, variables, out)
    for line in out:
        print("check-docs: " + line)
    print("check-docs: %d files, %d findings (the self-test's 6 stale references were all found)" % (
        len(docs()), len(out)))
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())

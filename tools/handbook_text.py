#!/usr/bin/env python3
"""Plain English text of The Debian Administrator's Handbook, for quality runs
on a long real text (issue 32's >= 100k-token table).

Reads the HTML the Debian package `debian-handbook` ships (en-US), page by
page in reading order (each page's rel="next" link, from index.html), keeps
the text of each page's body without the site banner and navigation, and
writes it as UTF-8 with one blank line between blocks.

    apt-get download debian-handbook && dpkg -x debian-handbook_*.deb handbook
    python3 tools/handbook_text.py handbook/usr/share/doc/debian-handbook/html/en-US > handbook.txt
"""
import html.parser
import pathlib
import re
import sys

SKIP_IDS = {"banner", "navheader", "navfooter"}
SKIP_CLASSES = {"navheader", "navfooter", "toc", "docnav"}
BLOCKS = {"p", "div", "pre", "li", "h1", "h2", "h3", "h4", "h5", "tr", "dt", "dd", "br", "table"}
VOID = {"br", "img", "meta", "link", "hr", "input", "col", "area", "base", "wbr"}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []  # (tag, skipping) for open elements
        self.out = []
        self.next = None
        self.in_body = False

    def skipping(self):
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "link" and a.get("rel") == "next":
            self.next = a.get("href")
        if tag == "body":
            self.in_body = True
        if tag in VOID:
            if tag == "br":
                self.out.append("\n")
            return
        skip = self.skipping() or tag in ("script", "style") or a.get("id") in SKIP_IDS or \
            bool(SKIP_CLASSES & set((a.get("class") or "").split()))
        self.stack.append((tag, skip))
        if tag in BLOCKS and not skip:
            self.out.append("\n\n")

    def handle_endtag(self, tag):
        while self.stack:
            open_tag, _ = self.stack.pop()
            if open_tag == tag:
                break
        if tag in BLOCKS:
            self.out.append("\n\n")

    def handle_data(self, data):
        if self.in_body and not self.skipping():
            self.out.append(data)


def page_text(raw):
    p = Page()
    p.feed(raw)
    text = "".join(p.out)
    blocks = [re.sub(r"[ \t]+", " ", b).strip() for b in re.split(r"\n\s*\n", text)]
    return "\n\n".join(b for b in blocks if b), p.next


def main():
    root = pathlib.Path(sys.argv[1])
    name, seen, parts = "index.html", set(), []
    while name and name not in seen and (root / name).exists():
        seen.add(name)
        text, name = page_text((root / name).read_text(encoding="utf-8"))
        parts.append(text)
    sys.stdout.write("\n\n".join(parts) + "\n")
    print(f"{len(seen)} pages", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Read a rendered page the way a browser would, and list whatever in it could run script."""

from __future__ import annotations

from html.parser import HTMLParser

URL_ATTRIBUTES = {"href", "src", "action", "formaction", "hx-get", "hx-post", "data", "poster"}


class _Scanner(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            value = (value or "").strip()
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=…> event handler")
            if name == "style":
                self.problems.append(f"<{tag} style=…> inline style")
            if name in URL_ATTRIBUTES and value.lower().replace(" ", "").startswith(
                ("javascript:", "vbscript:", "data:text/html")
            ):
                self.problems.append(f"<{tag} {name}={value!r}> script URL")
        if tag == "script":
            src = dict(attrs).get("src") or ""
            if not src.startswith("/") or src.startswith("//"):
                self.problems.append(f"<script src={src!r}>: not a script of this site")
            self._in_script = True
        if tag in ("iframe", "object", "embed", "base", "style"):
            self.problems.append(f"<{tag}> element")
        if tag == "img" and dict(attrs).get("src") == "x":
            self.problems.append("<img src=x> injected")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script and data.strip():
            self.problems.append(f"inline script body: {data.strip()[:60]!r}")
        self.text.append(data)


def script_risks(html: str) -> list[str]:
    """Every element, attribute or URL in `html` that could run script."""
    scanner = _Scanner()
    scanner.feed(html)
    scanner.close()
    return scanner.problems


def visible_text(html: str) -> str:
    """The page's text as the browser shows it: entities decoded, tags gone."""
    scanner = _Scanner()
    scanner.feed(html)
    scanner.close()
    return "".join(scanner.text)

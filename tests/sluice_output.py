"""Reading what `sluice` prints: the values of `-h ELEM.HANDLER` options."""


def parse_handlers(out):
    """`-h` output (`NAME:` then the value's lines, then a blank line, per handler) as a dict
    from handler name to value (lines joined by newlines, without the trailing newline)."""
    res, name, buf = {}, None, []
    for line in out.splitlines():
        if name is None and line.endswith(":") and "." in line:
            name, buf = line[:-1], []
        elif name is not None and line == "":
            res[name] = "\n".join(buf)
            name = None
        elif name is not None:
            buf.append(line)
    if name is not None:
        res[name] = "\n".join(buf)
    return res

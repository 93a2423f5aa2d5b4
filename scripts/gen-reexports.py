#!/usr/bin/env python3
"""Prints explicit named re-exports of each listed package's public index, for the meta-package."""
import re, sys
def names(pkg):
    src = open(f'packages/{pkg}/src/index.ts').read()
    src = re.sub(r'/\*.*?\*/', '', src, flags=re.S)
    values, types = [], []
    for m in re.finditer(r'export\s+(type\s+)?\{([^}]*)\}\s*from\s*[\'"]([^\'"]+)[\'"]', src):
        is_type, body, origin = m.group(1), m.group(2), m.group(3)
        if origin.startswith('@signalyard/'):
            continue  # re-exported from its own package
        for n in [x.strip() for x in body.split(',') if x.strip()]:
            if n.startswith('type '):
                types.append(n[5:].strip())
            elif is_type:
                types.append(n)
            else:
                values.append(n)
    return sorted(set(values)), sorted(set(types))
def block(pkgs):
    out = []
    for pkg in pkgs:
        v, t = names(pkg)
        mod = f'@signalyard/{pkg}'
        if v:
            out.append("export {\n" + ''.join(f"  {n},\n" for n in v) + f"}} from '{mod}';")
        if t:
            out.append("export type {\n" + ''.join(f"  {n},\n" for n in t) + f"}} from '{mod}';")
    return '\n'.join(out)

# Usage: gen-reexports.py [--write FILE] pkg...   (--write replaces the block between
# "// <re-exports>" and "// </re-exports>" in FILE)
args = sys.argv[1:]
if args[:1] == ['--write']:
    target, pkgs = args[1], args[2:]
    text = open(target).read()
    start, end = text.index('// <re-exports>'), text.index('// </re-exports>')
    text = text[:start] + '// <re-exports>\n' + block(pkgs) + '\n' + text[end:]
    open(target, 'w').write(text)
else:
    print(block(args))

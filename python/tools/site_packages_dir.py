"""Prints where the running interpreter looks for packages under PREFIX.

Used by `cmake --install` for the Python package: Debian's python3 reads
/usr/lib/python3/dist-packages and /usr/local/lib/python3.X/dist-packages,
and ~/.local/lib/python3.X/site-packages for the user; any other prefix gets
the standard layout (put it on PYTHONPATH).
"""
import os
import sys
import sysconfig

prefix = os.path.abspath(sys.argv[1])
version = f"python{sys.version_info.major}.{sys.version_info.minor}"
if prefix == "/usr" and os.path.isdir("/usr/lib/python3/dist-packages"):
    print("/usr/lib/python3/dist-packages")
elif prefix == "/usr/local" and any(p.endswith("dist-packages") for p in sys.path):
    print(f"/usr/local/lib/{version}/dist-packages")
else:
    print(sysconfig.get_path("platlib", "posix_prefix", vars={"base": prefix, "platbase": prefix}))

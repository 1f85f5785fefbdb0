"""`cmake --install` puts the package where the interpreter finds it."""
import os
import subprocess
import sys


def test_installed_package_imports_and_runs(repo, build_dir, tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(build_dir), "--prefix", str(prefix), "--component",
                    "python"], check=True, capture_output=True, timeout=300)
    site = subprocess.run([sys.executable, str(repo / "python" / "tools" /
                                               "site_packages_dir.py"), str(prefix)],
                          check=True, capture_output=True, text=True).stdout.strip()
    assert os.path.isfile(os.path.join(site, "sharc", "__init__.py"))
    code = ("import numpy as np, sharc; "
            "m = sharc.parse('HloModule m\\nENTRY %e {\\n  %x = f32[2] parameter(0)\\n"
            "  ROOT %y = f32[2] add(%x, %x)\\n}\\n'); "
            "print(sharc.compile(m, backend='interpreter')(np.ones(2, np.float32)).tolist(), "
            "sharc.__file__)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = site
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[2.0, 2.0] " + site)

"""A PEP 517 build backend that packs the ttlpred package CMake already built into a wheel.

Why not setuptools or scikit-build: the extension is compiled by the project's CMake build
(with the same flags and static libraries as the `ttlpred` program); all a wheel needs is
those files zipped with their metadata. This keeps `pip install build/python` offline and
free of build dependencies. The wheel is tagged for this interpreter and platform only.
"""
import base64
import hashlib
import os
import sys
import sysconfig
import zipfile

NAME, VERSION = "ttlpred", "0.1.0"
HERE = os.path.dirname(os.path.abspath(__file__))


def _tag():
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    return f"{impl}-{impl}-{sysconfig.get_platform().replace('-', '_').replace('.', '_')}"


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            "Summary: Grid-job run-time prediction and safe TTLs\nRequires-Python: >=3.9\nRequires-Dist: numpy\n"
            "Provides-Extra: pandas\nRequires-Dist: pandas; extra == \"pandas\"\n"
            "Provides-Extra: parquet\nRequires-Dist: pyarrow; extra == \"parquet\"\n")


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = os.path.join(metadata_directory, f"{NAME}-{VERSION}.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(_metadata())
    return os.path.basename(info)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    package = os.path.join(HERE, NAME)
    if not any(n.startswith("_core") for n in os.listdir(package)):
        raise RuntimeError(f"{package} has no compiled _core module: build it with CMake first (docs/python.md)")
    info = f"{NAME}-{VERSION}.dist-info"
    wheel_name = f"{NAME}-{VERSION}-{_tag()}.whl"
    records = []

    def add(zf, arcname, data):
        zf.writestr(arcname, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        records.append(f"{arcname},sha256={digest},{len(data)}")

    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(os.listdir(package)):
            path = os.path.join(package, name)
            if os.path.isfile(path) and not name.endswith(".pyc"):
                with open(path, "rb") as f:
                    add(zf, f"{NAME}/{name}", f.read())
        add(zf, f"{info}/METADATA", _metadata().encode())
        add(zf, f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: ttlpred-wheel-backend\nRoot-Is-Purelib: false\n"
                                 f"Tag: {_tag()}\n".encode())
        records.append(f"{info}/RECORD,,")
        zf.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    return wheel_name

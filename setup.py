"""setuptools shim: pyproject.toml carries the metadata; this file only hands cffi its
out-of-line build script, which pyproject.toml has no key for."""

from setuptools import setup

setup(cffi_modules=["native/build.py:ffibuilder"])

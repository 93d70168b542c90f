"""The names `code_risk` knows: what a dotted name, a method, a builtin or a magic does.

A dotted name matches a pattern when it, or a name it begins with, matches it (``fnmatch``):
``subprocess`` matches ``subprocess.run``, ``os.exec*`` matches ``os.execv``. Anything not here
is unknown to the scan, and unknown is never read-only.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Literal

Risk = Literal["read-only", "modifies", "writes-files", "deletes", "network", "runs-commands", "unreadable"]
RISKS: tuple[Risk, ...] = (
    "read-only",
    "modifies",
    "writes-files",
    "deletes",
    "network",
    "runs-commands",
    "unreadable",
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# The riskiest label wins when a name matches several.
QUALIFIED: dict[Risk, frozenset[str]] = {
    "runs-commands": _words("""
        subprocess os.system os.popen os.exec* os.spawn* os.posix_spawn* os.fork* os.kill os.killpg
        os.startfile pty multiprocessing asyncio.create_subprocess_* pexpect plumbum platform.popen
        webbrowser
    """),
    "network": _words("""
        socket ssl urllib urllib3 requests httpx http aiohttp ftplib smtplib poplib imaplib nntplib
        telnetlib xmlrpc socketserver websocket websockets paramiko asyncio.open_connection
        asyncio.start_server grpc boto3 botocore
    """),
    "deletes": _words("os.remove os.unlink os.rmdir os.removedirs shutil.rmtree send2trash"),
    "writes-files": _words("""
        os.rename os.renames os.replace os.mkdir os.makedirs os.chmod os.chown os.lchown os.link
        os.symlink os.truncate os.utime os.mkfifo os.mknod os.open os.write os.chdir shutil tempfile
        zipfile tarfile shelve dbm sqlite3 json.dump pickle.dump logging
    """),
    # Not read-only, though nothing riskier: the process's environment (secrets), exit, streams.
    "modifies": _words("""
        os.environ os.environb os.getenv os.getenvb os.putenv os.unsetenv sys.exit sys.stdout
        sys.stderr sys.stdin sys.path sys.argv sys.setrecursionlimit random.seed
    """),
    # Code the scan cannot read: it runs code given as data, or reaches the interpreter's insides.
    "unreadable": _words("""
        builtins importlib imp runpy ctypes cffi pickle.load pickle.loads pickle.Unpickler _pickle
        cloudpickle dill marshal joblib.load codeop sys.modules sys._getframe sys.settrace
        sys.setprofile sys.meta_path sys.path_hooks inspect.currentframe inspect.stack inspect.trace gc
        types.FunctionType types.CodeType operator.attrgetter operator.methodcaller pdb IPython
        ipykernel pandas.read_pickle pd.read_pickle torch.load yaml.load yaml.unsafe_load
    """),
}

# Builtins whose mere use makes code unreadable: they run code given as data or reach the
# interpreter's namespaces (``get_ipython()`` is read only where it runs a literal magic or command).
DYNAMIC_BUILTINS = _words("exec eval compile __import__ globals vars locals breakpoint get_ipython")

# Builtins read-only code may call. ``getattr``, ``open`` and ``type`` are judged by their
# arguments; ``sorted``, ``min`` and ``max`` by their ``key``.
READ_BUILTINS = _words("""
    len print sorted repr str int float bool complex list tuple dict set frozenset min max sum abs
    round range enumerate zip reversed any all isinstance issubclass hash id format divmod pow chr
    ord bin hex oct ascii callable slice type
""")

# Methods that return a value and change nothing, on the values people explore (DataFrame,
# Series, arrays, lists, dicts, strings, files opened for reading).
READ_METHODS = _words("""
    head tail describe info mean median mode sum min max std var sem count nunique unique
    value_counts groupby size sort_values sort_index isna isnull notna notnull corr cov quantile
    round abs cumsum cumprod cummax cummin nlargest nsmallest memory_usage items keys values get
    copy index startswith endswith lower upper strip lstrip rstrip split rsplit join tolist to_list
    to_numpy to_dict to_frame item all any prod argmax argmin argsort idxmax idxmin reshape
    transpose flatten ravel astype isin between clip diff pct_change rank shift duplicated
    drop_duplicates dropna fillna first last nth select_dtypes reset_index set_index rename drop
    explode melt stack unstack pivot merge concat most_common find
    rfind isdigit isalpha title capitalize casefold contains len nonzero where
""")
WRITE_METHODS = _words("""
    write writelines write_text write_bytes mkdir touch rename symlink_to hardlink_to chmod to_csv
    to_excel to_parquet to_pickle to_hdf to_feather to_stata to_sql to_json to_html to_latex
    to_markdown to_xml to_orc to_clipboard savefig save savez savez_compressed savetxt tofile dump
    extract extractall
""")
DELETE_METHODS = _words("unlink rmdir rmtree")
# Attributes that reach a frame, a code object or a class's insides (besides every __dunder__).
INSIDES = _words("""
    gi_frame gi_code cr_frame cr_code ag_frame ag_code f_globals f_locals f_builtins f_back f_code
    tb_frame tb_next co_code mro func_globals
""")

# IPython magics by what they do; any other magic runs code, or does what the scan cannot read.
MAGICS: dict[Risk, frozenset[str]] = {
    "read-only": _words("who whos who_ls pwd lsmagic"),
    "writes-files": _words("writefile file save logstart notebook store bookmark"),
    "runs-commands": _words("""
        system sx sc bash sh script perl ruby python python2 python3 pypy cp mv rm rmdir mkdir cat ls
        ll lf lk lx ldir clear less more man pip conda mamba micromamba uv
    """),
}


@functools.lru_cache(maxsize=4096)
def label_of_name(dotted: str) -> Risk | None:
    """The riskiest label a dotted name (``os.system``) matches, or None when it matches none."""
    parts = dotted.split(".")
    prefixes = [".".join(parts[: n + 1]) for n in range(len(parts))]
    for label, pattern in _COMPILED:
        if any(pattern.fullmatch(prefix) for prefix in prefixes):
            return label
    return None


# One regex per label, riskiest first: the patterns as fnmatch reads them.
_COMPILED: list[tuple[Risk, re.Pattern[str]]] = [
    (label, re.compile("|".join(fnmatch.translate(p) for p in sorted(QUALIFIED[label]))))
    for label in reversed(RISKS)
    if label in QUALIFIED
]


def label_of_magic(name: str) -> Risk:
    """What the magic ``name`` (without ``%``) does; ``unreadable`` for any the scan does not know."""
    for label, names in MAGICS.items():
        if name in names:
            return label
    return "unreadable"

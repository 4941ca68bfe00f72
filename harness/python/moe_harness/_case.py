"""Suites and cases: moe_harness.suite(), Suite, Case (over moe_harness/suite.hpp and moe_harness/case.hpp)."""
import json
import weakref

from moe_harness import _moe_harness as _native
from moe_harness._errors import bad_input, check_device, check_flag, check_path, check_seed, check_text, native_arguments
from moe_harness._outputs import host_output
from moe_harness.verdict import Verdict


def suite(name_or_path, filter=None, seed=None, reference_cache=None):
    """The suite `name_or_path` (smoke, nightly, ... or a YAML file), keeping the cases whose ids the glob(s)
    `filter` select (a str or a list; '*' and '?', a leading '-' excludes: `run --filter`); `seed` replaces every
    case's seed (`run --seed`). `reference_cache`: a directory where case.run() keeps each case's references and
    simulated envelope (`run --reference-cache`): a second kernel declaring the same contract, or a later process,
    reads them instead of computing them again (created when missing). Iterating it yields its cases. Bad input
    raises moe_harness.Error (exit_code 2)."""
    where = "moe_harness.suite()"
    name = name_or_path if isinstance(name_or_path, str) else check_path(name_or_path, where, "name_or_path")
    check_text(name, where, "name_or_path")
    try:
        filters = [] if filter is None else [filter] if isinstance(filter, str) else list(filter)
    except TypeError:
        raise bad_input(where, "filter", f"must be a glob or a list of globs, got {type(filter).__name__}",
                        "pass a str such as '*fp8*' or a list of them") from None
    for f in filters:
        check_text(f, where, "filter", "a glob string")
    check_seed(seed, where)
    cache = None if reference_cache is None else check_path(reference_cache, where, "reference_cache")
    with native_arguments(where):
        return Suite(_native.load_suite(name, filters, seed, cache))


class Suite:
    """A loaded, expanded suite: iterable over its Cases, in file order."""

    def __init__(self, native):
        self._native = native
        self._cases = [Case(native.case(i), self) for i in range(len(native))]

    name = property(lambda self: self._native.name)
    file = property(lambda self: self._native.file, doc="the suite file")
    seed = property(lambda self: self._native.seed, doc="the seed override, or None: each case's own seed")

    def __iter__(self):
        return iter(self._cases)

    def __len__(self):
        return len(self._cases)

    def __getitem__(self, i):
        return self._cases[i]

    def __repr__(self):
        return f"moe_harness.Suite({self.name!r}, {len(self)} cases, {self.file!r})"


def _needs_device(device, kernel):
    return device not in (None, "cpu") or bool(getattr(kernel, "needs_device", False))


def _kernel_id(kernel, kernel_id):
    return kernel_id or getattr(kernel, "id", None) or "python"


class Case:
    """One case of a suite: its id, its canonical JSON (`spec`), gating, fixture, verdicts."""

    def __init__(self, native, suite):
        self._native = native
        # A weak reference: a Suite holds its Cases, so a strong one back would make a cycle, and a dropped suite
        # (with the expert weights its native handle shares, GBs on the nightly) would stay resident until the next
        # cyclic collection instead of going at once.
        self._suite = weakref.ref(suite)
        self._spec = None

    @property
    def suite(self):
        """The Suite this case belongs to; once the caller has dropped that object, a new Suite over the same loaded
        suite (same name, file, seed and cases)."""
        s = self._suite()
        if s is None:
            s = Suite(self._native.suite)
            self._suite = weakref.ref(s)
        return s

    id = property(lambda self: self._native.id, doc="the canonical case id (report.json cases[].id)")
    source = property(lambda self: self._native.source, doc="file:line of the case in its suite")

    @property
    def spec(self):
        """The case as a dict: the case.json `moe-harness export` writes (`describe` prints it)."""
        if self._spec is None:
            self._spec = json.loads(self._native.json)
        return self._spec

    def gate(self, device=None, kernel=None, kernel_id=None, require_device=False):
        """Whether the case runs here for this kernel: ("run", ""), ("skip", reason) or ("fail", reason), by the
        rules of `run` (docs/reliability.md "Gating"): the case's kernel list (kernel_id, default the kernel's .id
        or "python"), and for a device kernel (device other than None/"cpu", or kernel.needs_device) the live
        device and the case's targets; then kernel.supports(case) when the kernel has it."""
        where = "moe_harness.Case.gate()"
        check_device(device, where)
        check_flag(require_device, where, "require_device")
        with native_arguments(where):
            return self._native.gate(self, kernel, _kernel_id(kernel, kernel_id), _needs_device(device, kernel),
                                     require_device)

    def fixture(self):
        """The case's pristine checkpoint and its routing as a moe_harness.Fixture: fixture["w13"], ... each a
        moe_harness.Tensor (np.asarray(t) and torch.from_dlpack(t) are views, no copy; t.format names the
        element format), plus topk_ids / topk_weights, the routing the output is judged on. Computed once per case
        (with the references case.judge() compares against); release() drops them."""
        fx = self._native.fixture()
        fx.spec = self.spec
        fx.case = self
        return fx

    def new_output(self):
        """A writable moe_harness.Tensor [tokens, hidden] of the output dtype, every element the NaN sentinel
        (`run` gives a kernel the same): an element never written fails the verdict as unwritten."""
        return self._native.new_output()

    def judge(self, out, kernel_id="python"):
        """The verdict on `out` ([tokens, hidden] in the case's output dtype: a NumPy array, a moe_harness.Tensor
        or any DLPack tensor; bf16 as bfloat16 or 16-bit integers holding bf16 bits; device tensors are copied
        to the host first) against this case's fixture (case.fixture()): the record `run` writes, without the
        probes (they need a kernel to run again: case.run). Wrong shape or dtype raises moe_harness.Error."""
        check_text(kernel_id, "moe_harness.Case.judge()", "kernel_id")
        with native_arguments("moe_harness.Case.judge()"):
            return Verdict(self._native.judge(host_output(out), kernel_id), self)

    def run(self, kernel, device=None, kernel_id=None, kernel_version=None, require_device=False,
            envelope="on_failure", token_probes=True):
        """The whole pipeline of `run` on a Python kernel: gating, fixture, references, kernel(fixture, out) into
        the NaN sentinel, the pristine check, the verdict, then the probes (the kernel is called again into the
        inverse sentinel, and with router weights doubled). `kernel` is a callable kernel(fixture, out) -> None
        or a variant string; it may have supports(case) -> None | reason (a reason is a skip), deterministic(case)
        -> bool (False: no bit-exact rerun or linearity probes), rereads_expert_weights -> bool (True: the expert
        relabeling probe runs), graph_safe -> bool (False: the graph_replay device probe does not run; docs/python.md
        "Device probes"), prepare(fixture), id, version, needs_device.
        An exception in the kernel is the verdict's error (status "error", the traceback in its reason).
        envelope: "on_failure" simulates the envelope of legitimate variation only for an output that fails at the
        case's own thresholds; "always" for every output, so that the verdict's metrics carry the envelope's figures
        (envelope_*, the statistics' z scales); the verdict is the same (docs/judging.md "The envelope").
        token_probes=False skips the token and device probes after a pass, as `run --no-token-probes` does."""
        version = kernel_version if kernel_version is not None else str(getattr(kernel, "version", ""))
        where = "moe_harness.Case.run()"
        if not callable(kernel):
            raise bad_input(where, "kernel", f"must be a callable kernel(fixture, out), got {type(kernel).__name__} "
                                             f"{kernel!r}",
                            "pass a function or an object with __call__(fixture, out) (docs/python.md), e.g. "
                            "moe_harness.native_kernel('host')")
        check_device(device, where)
        check_flag(require_device, where, "require_device")
        check_text(_kernel_id(kernel, kernel_id), where, "kernel_id")
        check_text(version, where, "kernel_version")
        if envelope not in ("on_failure", "always"):
            raise bad_input(where, "envelope", f"{envelope!r} is neither 'on_failure' nor 'always'",
                            "pass envelope='always' to simulate the envelope for every output, or leave it out")
        token_probes = check_flag(token_probes, where, "token_probes")
        with native_arguments(where):
            record = self._native.run(self, self.spec, kernel, _kernel_id(kernel, kernel_id), version,
                                      _needs_device(device, kernel), require_device, envelope == "always",
                                      token_probes)
        return Verdict(record, self)

    def release(self):
        """Drops the fixture and references case.fixture() and case.judge() keep (views stay valid)."""
        self._native.release()

    def __repr__(self):
        return f"moe_harness.Case({self.id!r})"

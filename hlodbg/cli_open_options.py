"""The options `hlodbg open` and `serve` share, which a DAP launch request takes too (hlodbg/dap/launch.py):
the program's run, its arguments, grid, target and session breakpoint. Each option's module is
imported when the options are built, so `hlodbg --help` loads none of them."""
from __future__ import annotations


def add_session_options(cmd) -> None:
    """The options of a debugging session: which program run, on which arguments, devices and target."""
    cmd.add_argument("--chunk", type=int, default=None, help="module to open in a '// -----' split file")
    from hlodbg.cli_run import add_argument_options

    add_argument_options(cmd, "function to debug")
    from hlodbg.cli_run import GivenOnce

    cmd.add_argument("--break-on", action=GivenOnce, metavar="SPEC", help="add this breakpoint for this session (not saved) and continue "
                     "to it at start (nan, inf, %%12, model.py:42, diverge, ...)")
    from hlodbg.divergence_report import add_against_option

    add_against_option(cmd)
    cmd.add_argument("--memory", metavar="SIZE", help="what the recording may hold: values and the history of events (2G, 512M; default: values the arguments' size, at least 256M, history a quarter of RAM); past it the run stops with a memory stop")
    cmd.add_argument("--replicas", type=int, metavar="R", help="grid replicas (default: the module's mhlo.num_replicas)")
    cmd.add_argument("--partitions", type=int, metavar="P", help="grid partitions (default: the module's mhlo.num_partitions)")
    cmd.add_argument("--device", metavar="R,P", help="the device the debugger focuses on a grid (default 0,0)")
    from hlodbg.cli_target import add_target_options

    add_target_options(cmd, "runs")
    from hlodbg.cli_elided import add_fill_elided_option

    add_fill_elided_option(cmd)
    from hlodbg.cli_replay import add_capture_option

    add_capture_option(cmd)
    cmd.add_argument("--no-save", action="store_true", help="keep breakpoints and watches for this session only "
                     "(do not load or save the program's; serve uses it for every browser session)")

"""Help texts several commands' options share. Imports nothing: `hlodbg --help` builds its parser
from here before any command's own module (and numpy, the engine) is loaded."""

PROGRAM_HELP = "StableHLO MLIR (.mlir) or XLA HLO text (.hlo, .txt; dumps and as_text() output)"

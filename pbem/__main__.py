"""`python -m pbem` runs the command line."""

from pbem.entry import main

main()

from openwork_core.cli import main

main()

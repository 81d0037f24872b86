from openwork_core.daemon.cli import main

main()

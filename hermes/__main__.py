from hermes.cli.main import main

main()

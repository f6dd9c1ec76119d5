from agentcfg.cli import main

main()

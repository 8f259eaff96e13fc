"""The shells a person sees: the REPL (prompt_toolkit + rich) and the headless printer."""

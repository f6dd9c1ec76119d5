"""`agentcfg serve`: the local vLLM server built from the same profile as the agents.

families.py holds the flags each model family needs (a table, with the source of each row); command.py
turns a profile and what the user says about the weights into the `vllm serve` command and its
environment (pure); procs.py and gpus.py read the process table and nvidia-smi; lifecycle.py starts,
stops, restarts and watches the server, with records.py (its kept options and process record), checks.py
(port and GPU memory before a start) and waits.py (its HTTP side); unit.py writes its systemd unit.
"""

"""The MCP surface beyond tools: resources, prompts and completion, in plain values.

Hosts put these in front of the person (an attach menu, slash commands, argument
completion); none of it is in the model's window unless the person picks it. The SDK
boundary (:mod:`ctxtrio._sdk.surface`) turns these values into the protocol's objects.
"""

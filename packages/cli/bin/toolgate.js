#!/usr/bin/env node
// Node's on-disk compile cache (Node >= 22.1) roughly halves the start-up of later runs.
import module from "node:module"

module.enableCompileCache?.()
await import("../dist/bin.js")

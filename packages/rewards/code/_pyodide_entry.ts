/**
 * Internal: the module the Python sandbox child (`_py_runner.ts`) imports Pyodide through.
 *
 * The child's import map (written by `python.ts`) maps this module's URL to `pyodide.mjs` of
 * the pinned npm package, so the runner's import is a static, relative one: a package published
 * to JSR may not hold a dynamic import whose target is known only at run time, and the child
 * runs under `--no-config`, where the bare name `pyodide` means nothing. Loaded anywhere else
 * (without that import map), its `loadPyodide` rejects.
 *
 * @module
 */

/** Stands in for Pyodide's `loadPyodide`; only the sandbox child's import map provides it. */
export function loadPyodide(config: Record<string, unknown>): Promise<unknown> {
  return Promise.reject(
    new Error(
      `loadPyodide(${JSON.stringify(Object.keys(config))}): _pyodide_entry.ts was loaded ` +
        `without the Python sandbox's import map; run Python through runTests or codeReward`,
    ),
  );
}

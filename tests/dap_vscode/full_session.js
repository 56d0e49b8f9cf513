// VS Code's DebugClient (@vscode/debugadapter-testsupport) drives `hlodbg dap` through whole
// sessions, as the editor would: tests/test_dap_vscode_client.py runs this script with
//
//   node full_session.js CONFIG.json
//
// CONFIG names the server (`runtime` and its one argument `executable`, started on stdio; `port`,
// a server already listening) and the programs: `mlp` (+ `mlpInputs`), `hlo`, `nan` (+ `nanInputs`).
// Any failed assertion exits with status 1 and says which step failed.
'use strict';

const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
// A bound on each wait, so that a server that never answers fails the test instead of hanging it.
const WAIT_MS = 300000;

function lineOf(file, text) {
	const lines = fs.readFileSync(file, 'utf8').split('\n');
	const index = lines.findIndex(line => line.includes(text));
	assert.ok(index >= 0, `${text} is not in ${file}`);
	return index + 1;
}

async function client(overPort) {
	const dc = new DebugClient(config.runtime, config.executable, 'hlodbg', undefined, true);
	dc.defaultTimeout = WAIT_MS;
	await (overPort ? dc.start(config.port) : dc.start());
	return dc;
}

async function stopAfter(dc, request) {
	const stopped = dc.waitForEvent('stopped');
	await request;
	return stopped;
}

async function topFrame(dc, threadId) {
	const trace = await dc.stackTraceRequest({ threadId });
	return trace.body.stackFrames[0];
}

async function variablesOf(dc, frameId, scopePrefix) {
	const scopes = (await dc.scopesRequest({ frameId })).body.scopes;
	const scope = scopes.find(s => s.name.startsWith(scopePrefix));
	assert.ok(scope, `no scope ${scopePrefix} among ${scopes.map(s => s.name)}`);
	return (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
}

// launch, a line breakpoint, continue, variables, step back, reverse continue, evaluate.
async function lineBreakpointSession() {
	const dc = await client(false);
	try {
		const add = lineOf(config.mlp, 'stablehlo.add');
		const relu = lineOf(config.mlp, 'stablehlo.maximum');
		await dc.hitBreakpoint({ program: config.mlp, args: config.mlpInputs }, { path: config.mlp, line: add });
		const threads = (await dc.threadsRequest()).body.threads;
		assert.deepStrictEqual(threads.map(t => t.id), [1]);

		let frame = await topFrame(dc, 1);
		const operands = await variablesOf(dc, frame.id, 'Operands');
		assert.deepStrictEqual(operands.map(v => v.evaluateName), ['%0', '%2']);
		assert.match(operands[0].value, /^8x4xf32 min /);
		const rows = (await dc.variablesRequest({ variablesReference: operands[0].variablesReference })).body.variables;
		assert.strictEqual(rows.length, 8);
		const elements = (await dc.variablesRequest({ variablesReference: rows[0].variablesReference })).body.variables;
		assert.strictEqual(elements.length, 4);
		assert.ok(elements.every(e => Number.isFinite(Number(e.value))), JSON.stringify(elements));

		const sum = await dc.evaluateRequest({ expression: '(%0 + %2).shape', frameId: frame.id, context: 'watch' });
		assert.strictEqual(sum.body.result, '(8, 4)');

		// A second breakpoint, in the called function, and continue to it.
		await dc.setBreakpointsRequest({ source: { path: config.mlp }, breakpoints: [{ line: add }, { line: relu }] });
		let stopped = await stopAfter(dc, dc.continueRequest({ threadId: 1 }));
		assert.strictEqual(stopped.body.reason, 'breakpoint');
		const trace = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
		assert.strictEqual(trace[0].line, relu);
		assert.match(trace[0].name, /^@relu/);
		assert.strictEqual(trace[1].line, add + 1);  // the call in @main

		stopped = await stopAfter(dc, dc.stepBackRequest({ threadId: 1 }));
		assert.strictEqual(stopped.body.reason, 'step');
		frame = await topFrame(dc, 1);
		assert.strictEqual(frame.line, relu - 1);

		stopped = await stopAfter(dc, dc.reverseContinueRequest({ threadId: 1 }));
		assert.strictEqual(stopped.body.reason, 'breakpoint');
		assert.strictEqual((await topFrame(dc, 1)).line, add);

		stopped = await stopAfter(dc, dc.nextRequest({ threadId: 1 }));
		assert.strictEqual((await topFrame(dc, 1)).line, add + 1);
		await dc.setBreakpointsRequest({ source: { path: config.mlp }, breakpoints: [] });
		stopped = await stopAfter(dc, dc.continueRequest({ threadId: 1 }));
		assert.strictEqual(stopped.body.reason, 'end');
		const results = await variablesOf(dc, (await topFrame(dc, 1)).id, 'Program results');
		assert.match(results[0].value, /^8x4xf32/);

		await assert.rejects(dc.evaluateRequest({ expression: '%0 +', frameId: frame.id }), /invalid syntax/);
	} finally {
		await dc.stop();
	}
}

// A line breakpoint and a function breakpoint (an op kind) in an XLA HLO file.
async function hloSession() {
	const dc = await client(false);
	try {
		const grown = lineOf(config.hlo, '%grown = f32[4]{0} add');
		await dc.hitBreakpoint({ program: config.hlo }, { path: config.hlo, line: grown });
		assert.strictEqual((await dc.evaluateRequest({ expression: '%x.shape' })).body.result, '(4,)');
		const kinds = await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'negate' }] });
		assert.ok(kinds.body.breakpoints[0].verified);
		const stopped = await stopAfter(dc, dc.continueRequest({ threadId: 1 }));
		assert.ok(['breakpoint', 'function breakpoint'].includes(stopped.body.reason), stopped.body.reason);
		const frame = await topFrame(dc, 1);
		assert.strictEqual(path.basename(frame.source.path), path.basename(config.hlo));
	} finally {
		await dc.stop();
	}
}

// The NaN exception filter, over a TCP port: the op that made the NaN, in its loop iteration.
async function nanSession() {
	const dc = await client(true);
	try {
		const initialized = dc.waitForEvent('initialized');
		await dc.launch({ program: config.nan, args: config.nanInputs });
		await initialized;
		const filters = await dc.setExceptionBreakpointsRequest({ filters: ['nan'] });
		assert.ok(filters.body.breakpoints[0].verified);
		const stopped = dc.waitForEvent('stopped');
		await dc.configurationDoneRequest();
		const event = await stopped;
		assert.strictEqual(event.body.reason, 'exception');
		assert.match(event.body.description, /%s = stablehlo.sqrt/);
		const info = await dc.exceptionInfoRequest({ threadId: event.body.threadId });
		assert.strictEqual(info.body.exceptionId, 'nan');
		const frames = (await dc.stackTraceRequest({ threadId: event.body.threadId })).body.stackFrames;
		assert.deepStrictEqual(frames.map(f => f.name.split(':')[0]), ['@update', '@main while.body #3', '@main']);
		const made = await variablesOf(dc, frames[0].id, 'Just computed');
		assert.match(made[0].value, /4 NaN/);
		const back = await stopAfter(dc, dc.stepBackRequest({ threadId: event.body.threadId }));
		assert.strictEqual(back.body.reason, 'step');
		assert.strictEqual((await topFrame(dc, 1)).name, '@update: %s = stablehlo.sqrt');
	} finally {
		await dc.stop();
	}
}

async function main() {
	const sessions = { lineBreakpointSession, hloSession, nanSession };
	for (const [name, run] of Object.entries(sessions)) {
		try {
			await run();
			console.log(`ok ${name}`);
		} catch (error) {
			console.log(`FAILED ${name}: ${error && error.stack || error}`);
			process.exit(1);
		}
	}
	process.exit(0);  // the clients' pending request timers would keep node alive for minutes
}

main();

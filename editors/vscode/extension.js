// Starts `hlodbg dap` for every "type": "hlodbg" launch configuration; the server does the rest.
'use strict';

const vscode = require('vscode');

function activate(context) {
	context.subscriptions.push(vscode.debug.registerDebugAdapterDescriptorFactory('hlodbg', {
		createDebugAdapterDescriptor() {
			const command = vscode.workspace.getConfiguration('hlodbg').get('command') || 'hlodbg';
			return new vscode.DebugAdapterExecutable(command, ['dap']);
		},
	}));
}

module.exports = { activate, deactivate() {} };

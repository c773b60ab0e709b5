// Screens loaded when first opened, as chunks of their own, so the console's first load stays
// small (issue 32: ≤ 60 KiB with brotli or gzip): the operations screens (jobs, doctor, history),
// the contract screens, the platform screens (system, menus, safe IP ranges) and the NAS page's
// and record screens' extra sections. The customer page declares its own (its usage and history,
// customer.tsx): importing this file, which loads the customer page, would be an import circle.
import type { Nas } from "../api";
import { lazy } from "./lazy-load";

export const JobsScreen = lazy(() => import("./jobs").then((m) => m.JobsScreen));
export const DoctorScreen = lazy(() => import("./doctor").then((m) => m.DoctorScreen));
export const NetworkPolicyScreen = lazy(() => import("./network-policy").then((m) => m.NetworkPolicyScreen));
export const HistoryScreen = lazy(() => import("./history").then((m) => m.HistoryScreen));
export const RecordHistory = lazy<{ type: string; id: string; refresh?: unknown }>(() => import("./history").then((m) => m.RecordHistory));
export const NasOps = lazy<{ nas: Nas }>(() => import("./nas-page").then((m) => m.NasOps));
// The customer page and the online board: the day's screens, but not the first one an operator sees.
export const CustomerPage = lazy<{ id: string }>(() => import("./customer").then((m) => m.CustomerPage));
export const OnlineBoard = lazy<Record<string, never>>(() => import("./online").then((m) => m.OnlineBoard));
// The contract screens, the system screen, the menus and the safe IP ranges: a click away from the
// dashboard, not on it.
export const ContractList = lazy<Record<string, never>>(() => import("./contracts").then((m) => m.ContractList));
export const ContractCreate = lazy<Record<string, never>>(() => import("./contracts").then((m) => m.ContractCreate));
export const ContractDetail = lazy<{ id: string }>(() => import("./contracts").then((m) => m.ContractDetail));
export const SystemScreen = lazy<Record<string, never>>(() => import("./system").then((m) => m.SystemScreen));
export const Menus = lazy<Record<string, never>>(() => import("./menus").then((m) => m.Menus));
export const SafeIps = lazy<Record<string, never>>(() => import("./safeip").then((m) => m.SafeIps));

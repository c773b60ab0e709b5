// Screens loaded when first opened, as chunks of their own, so the console's first load stays
// small (issue 32: ≤ 60 KiB with brotli or gzip): the operations screens (jobs, doctor, history),
// the contract screens, the platform screens (system, menus, safe IP ranges) and the NAS page's
// and record screens' extra sections.
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { Nas } from "../api";
import { t } from "../i18n";

function lazy<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  return function Lazy(props: P) {
    const [C, setC] = useState<ComponentType<P> | null>(() => loaded);
    useEffect(() => {
      if (C) return;
      let live = true;
      load().then((c) => {
        loaded = c;
        if (live) setC(() => c);
      });
      return () => {
        live = false;
      };
    }, []);
    return C ? <C {...props} /> : <p aria-busy="true">{t("common.loading")}</p>;
  };
}

export const JobsScreen = lazy(() => import("./jobs").then((m) => m.JobsScreen));
export const DoctorScreen = lazy(() => import("./doctor").then((m) => m.DoctorScreen));
export const NetworkPolicyScreen = lazy(() => import("./network-policy").then((m) => m.NetworkPolicyScreen));
export const HistoryScreen = lazy(() => import("./history").then((m) => m.HistoryScreen));
export const RecordHistory = lazy<{ type: string; id: string; refresh?: unknown }>(() => import("./history").then((m) => m.RecordHistory));
export const NasOps = lazy<{ nas: Nas }>(() => import("./nas-page").then((m) => m.NasOps));
export const ContractUsage = lazy<{ contractId: string; number: string; refresh?: unknown }>(() => import("./customer-extras").then((m) => m.ContractUsage));
export const CustomerHistory = lazy<{ targets: { type: string; id: string }[]; refresh?: unknown }>(() => import("./customer-extras").then((m) => m.CustomerHistory));
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

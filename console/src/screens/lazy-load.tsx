// A component loaded when first rendered, as a chunk of its own (lazy.tsx lists the screens;
// customer.tsx its extra sections). Apart from lazy.tsx so a lazily loaded screen can declare lazy
// parts of its own without importing the list that loads it.
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { t } from "../i18n";

export function lazy<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
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

import { redirect } from "next/navigation";

export default function DesignerIndex() {
  redirect("/designer/actors");
}

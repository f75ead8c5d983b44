import * as Menu from "@radix-ui/react-dropdown-menu";
import { useNavigate } from "@tanstack/react-router";
import { forgetPersonData, signOut } from "../../api/session.ts";
import type { Person } from "../../api/types.ts";

/** The signed-in person (email, role, organization) and signing out, in a keyboard-usable menu. */
export function PersonMenu({ person }: { person: Person }) {
  const navigate = useNavigate();
  const leave = async () => {
    await signOut();
    await navigate({ to: "/sign-in", search: {} });
    forgetPersonData();
  };
  return (
    <Menu.Root>
      <Menu.Trigger
        className="max-w-48 truncate rounded-md border border-line px-2 py-1 text-sm hover:bg-sunken sm:max-w-64"
        aria-label={`Signed in as ${person.email}`}
      >
        {person.email}
      </Menu.Trigger>
      <Menu.Portal>
        <Menu.Content
          align="end"
          sideOffset={6}
          className="z-10 min-w-56 rounded-md border border-line bg-surface p-1 text-sm text-ink shadow-lg"
        >
          <div className="px-2 py-1.5">
            <div className="font-medium">{person.email}</div>
            <div className="text-muted">
              {person.role} · {person.org}
            </div>
          </div>
          <Menu.Separator className="my-1 h-px bg-line" />
          <Menu.Item
            onSelect={() => void leave()}
            className="cursor-pointer rounded px-2 py-1.5 outline-none data-[highlighted]:bg-sunken"
          >
            Sign out
          </Menu.Item>
        </Menu.Content>
      </Menu.Portal>
    </Menu.Root>
  );
}

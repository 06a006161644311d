ALTER TABLE "orders" DROP CONSTRAINT "orders_agent_id_agents_id_fk";

"""Tell: after the decision's commit, its notices rendered, queued in the outbox, sent."""

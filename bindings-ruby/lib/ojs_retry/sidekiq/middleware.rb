# frozen_string_literal: true

module OjsRetry
  module Sidekiq
    # The client middleware: a job's policy (the worker's `sidekiq_options
    # ojs_policy` and the job's own, over the install defaults) is validated
    # when the job is pushed; OjsRetry::PolicyError is raised from
    # `perform_async` before anything reaches Redis. A RetryPolicy given as
    # `ojs_policy` is carried as its document.
    class ClientMiddleware
      def call(worker_class, job, _queue, _redis_pool)
        Sidekiq::Push.validate(worker_class, job)
        yield
      end
    end

    # The server middleware: a job that raises is decided by the engine
    # (Sidekiq::Failed) and `Sidekiq::JobRetry::Skip` is raised in its
    # place, as Sidekiq's own JobRetry does once it has handled a failure:
    # Sidekiq then counts the job as failed, logs it, hands the original
    # exception (the Skip's cause) to its error handlers and acknowledges
    # the job, but schedules nothing itself.
    class ServerMiddleware
      SKIP_BACKTRACE = [].freeze
      private_constant :SKIP_BACKTRACE

      def call(worker, job, queue)
        yield
      rescue ::Sidekiq::Shutdown, ::Sidekiq::JobRetry::Handled
        raise
      rescue Exception => e # rubocop:disable Lint/RescueException -- as Sidekiq's JobRetry: every failure is decided
        # A job interrupted by shutdown is pushed back by Sidekiq, undecided;
        # a worker with its own sidekiq_retry_in block (code the engine
        # cannot read) and no policy is left to Sidekiq's JobRetry.
        raise if caused_by_shutdown?(e)

        defaults, layer, given = Sidekiq.resolve(worker.class, job)
        raise if !given && Sidekiq.retry_in_block?(worker)

        Failed.new(worker, job, queue, e).run(defaults, layer)
        # Without a backtrace of its own: Sidekiq re-raises the Skip on its
        # way out (JobRetry#local, #global), which turns a backtrace into
        # text each time, and only ever reports its cause (the job's own
        # exception, with its backtrace).
        raise ::Sidekiq::JobRetry::Skip, "Sidekiq::JobRetry::Skip", SKIP_BACKTRACE
      end

      private

      def caused_by_shutdown?(exc, seen = [])
        cause = exc.cause
        return false if cause.nil? || seen.include?(cause.object_id)

        seen << exc.object_id
        cause.instance_of?(::Sidekiq::Shutdown) || caused_by_shutdown?(cause, seen)
      end
    end

    # Push-time validation (ClientMiddleware).
    module Push
      # Marks a job whose policy was checked when it was first pushed.
      CHECKED_KEY = "ojs_policy_checked"

      # Validates a job's policy layers, raising OjsRetry::PolicyError. A
      # job Sidekiq pushes again — from its retry set (it has a
      # retry_count) or its schedule set (`perform_in`: the poller pushes
      # it when due, marked checked) — was validated when it was first
      # pushed, and what it carries is decided at failure time: refusing it
      # in the poller (the server's defaults changed meanwhile) would lose
      # it.
      def self.validate(worker_class, job)
        return if job.key?("retry_count") || job[CHECKED_KEY]

        job[POLICY_KEY] = Sidekiq.plain(job[POLICY_KEY]) if job[POLICY_KEY].is_a?(RetryPolicy)
        defaults, layer, given = Sidekiq.resolve(worker_class, job)
        # No policy given anywhere: Sidekiq's own options, taken as Sidekiq
        # takes them.
        return unless given

        RetryPolicy.merge(*defaults, *[layer].compact)
        job[CHECKED_KEY] = true if job.key?("at")
      end
    end

    # One failed job: the engine's transaction, then the outcome carried
    # out with Sidekiq's mechanisms, then the listeners.
    class Failed
      # OjsRetry.run_transaction's history_limit when none is given.
      ENGINE_HISTORY_LIMIT = 10
      private_constant :ENGINE_HISTORY_LIMIT

      def initialize(worker, job, queue, exc)
        @worker = worker
        # Only top-level keys are written: a shallow copy keeps the Hash
        # other middleware may still hold as it was.
        @msg = job.dup
        @queue = queue
        @exc = exc
      end

      # Decides (with the layers Sidekiq.layers_of gives, unless given),
      # carries out, then tells the listeners.
      def run(defaults = nil, layer = nil)
        defaults, layer = Sidekiq.layers_of(@worker.class, @msg) if defaults.nil?
        count = @msg["retry_count"]
        # Sidekiq's retry_count is the retries so far (absent before the
        # first failure): the attempt that failed is retry_count + 2.
        attempt = count.is_a?(Integer) ? count + 2 : 1
        now = Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)
        failure = Sidekiq.failure_of(@exc)
        out = OjsRetry.run_transaction(attempt, **keywords(defaults, layer, failure, now))
        action = out.action
        record(attempt, failure, out, now)
        carry_out(action, out)
        notify(action, attempt, failure, out, now)
      end

      private

      # The transaction's keywords, those left at the engine's default
      # (no defaults, no state, not timed out, no code, no details, the
      # history limit) left out: fewer keywords, a smaller Hash to build
      # and read on every failure.
      def keywords(defaults, layer, failure, now)
        kw = { key: @msg["jid"].to_s, queue: @queue.to_s, now: now,
               job: { "class" => @msg["class"], "args" => @msg["args"] },
               type: failure[:type], message: failure[:message] }
        kw[:defaults] = defaults unless defaults.empty?
        kw[:layer] = layer unless layer.nil?
        state = @msg[STATE_KEY]
        kw[:state] = state unless state.nil?
        kw[:history_limit] = HISTORY_LIMIT unless HISTORY_LIMIT == ENGINE_HISTORY_LIMIT
        kw[:timed_out] = true if failure[:timed_out]
        kw[:code] = failure[:code] unless failure[:code].nil?
        kw[:details] = failure[:details] unless failure[:details].nil?
        kw
      end

      # The payload's fields Sidekiq's own retry writes (its Web UI shows
      # them; the message as Sidekiq cuts and scrubs it), and the engine's
      # state.
      def record(attempt, failure, out, now)
        @msg["queue"] = @msg["retry_queue"] || @queue
        message = failure[:message][0, 10_000]
        message.force_encoding(Encoding::UTF_8).scrub!
        @msg["error_message"] = message
        @msg["error_class"] = @exc.class.name
        @msg[attempt == 1 ? "failed_at" : "retried_at"] = now / 1000.0
        @msg["retry_count"] = attempt - 1
        @msg[STATE_KEY] = out.state_json
      end

      def carry_out(action, out)
        case action
        when "retry"
          at = out.decision.next_retry_at / 1000.0
          payload = ::Sidekiq.dump_json(@msg)
          ::Sidekiq.redis { |conn| conn.zadd("retry", at.to_s, payload) }
        when "dead_letter"
          @msg[DEAD_LETTER_KEY] = JSON.parse(out.dead_letter)
          ::Sidekiq::DeadSet.new.kill(::Sidekiq.dump_json(@msg), notify_failure: false)
        end
        # "discard": acknowledged and kept nowhere, as Sidekiq's `retry:
        # false` and `dead: false` jobs.
      end

      # Sidekiq's own listeners for a job that will not run again (the
      # worker's sidekiq_retries_exhausted block, the death handlers), then
      # the install listeners; each one that raises is reported to
      # Sidekiq's error handlers and the next one still runs.
      def notify(action, attempt, failure, out, now)
        if action != "retry"
          block = @worker.respond_to?(:sidekiq_retries_exhausted_block) && @worker.sidekiq_retries_exhausted_block
          guarded("sidekiq_retries_exhausted") { block.call(@msg, @exc) } if block
          ::Sidekiq.death_handlers.each { |h| guarded("death handler") { h.call(@msg, @exc) } }
        end
        listeners = Sidekiq.config.listeners
        return if listeners.empty?

        event = DecisionEvent.new(queue: @queue, job_id: @msg["jid"], attempt: attempt, failure: failure,
                                  decision: out.decision, at_ms: now, notes: out.notes, job: @msg)
        listeners.each { |l| guarded("OjsRetry listener") { l.call(event) } }
      end

      def guarded(what)
        yield
      rescue StandardError => e
        Sidekiq.handle_exception(e, { context: "Error calling #{what}", job: @msg })
      end
    end
  end
end
